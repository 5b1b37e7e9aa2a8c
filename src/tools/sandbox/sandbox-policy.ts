/** What a box lets a command do: the same for every command of a runtime. */
export interface SandboxPolicy {
  /** The workspace root: where commands start, writable. Absolute and real (no symbolic links). */
  root: string;
  /** Further writable places (`sandbox.writable`), absolute and real; missing ones are left out. */
  writable: readonly string[];
  /**
   * Files and folders inside the writable places that stay read-only (cadre's database, its
   * configuration and agent files), absolute and real; missing ones are left out.
   */
  readOnly: readonly string[];
  /**
   * Folders outside the writable places that commands must see even where the box hides the file
   * system under them (a repository's git folder under `/tmp`, for a run's worktree). @default none
   */
  readable?: readonly string[];
  /** Whether commands reach the network. */
  network: boolean;
}
