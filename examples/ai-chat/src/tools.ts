/** The chat's one tool: the weather in a city, which runs only once a person approves it. */
import { type ToolSet, tool } from 'ai';
import { z } from 'zod';

/** How many times the weather tool ran, since the server started. */
export const toolRuns = { weather: 0 };

/** The tools the model may call. */
export const tools: ToolSet = {
  weather: tool({
    description: 'The weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }: { city: string }) => {
      toolRuns.weather++;
      return `sunny in ${city}`;
    },
  }),
};

/** Which tools wait for a person's approval before they run. */
export const toolApproval = { weather: 'user-approval' } as const;
