/** Every integration the suite runs: adding one to this list is all it takes to cover it. */
import type { Driver } from '../driver.js';
import { aiSdk } from './ai-sdk.js';
import { langgraph } from './langgraph.js';
import { openaiAgents } from './openai-agents.js';

export const DRIVERS = [langgraph, openaiAgents, aiSdk] as Driver[];
