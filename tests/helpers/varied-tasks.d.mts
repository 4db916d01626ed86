/** Nine different tasks, as people write them: a request, and the facts it comes with. */
export const TASKS: readonly string[];
