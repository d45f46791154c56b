/** The data a worker writes as step `i` of writer `tag`, so that the parent can check it exactly. */
export function stepData(tag: string, i: number) {
  return { tag, i, text: `step ${i} of ${tag} `.repeat(20), nested: { list: [i, tag, null] } };
}
