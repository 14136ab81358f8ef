/** Where a command reports, line by line (stdout for the CLI, a list for tests). */
export interface AdminOutput {
  line(text: string): void;
}
