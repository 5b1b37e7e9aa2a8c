/** Export: a session with its messages, runs and events as one document (JSON), and as a Markdown report. */
export { exportSession, type ExportSessionOptions } from './export-session.ts';
export { renderMarkdownExport } from './render-markdown-export.ts';
export type {
  ExportedMessage,
  ExportedRun,
  ExportedRunEvent,
  ExportedRunFields,
  ExportedSession,
  SessionExport,
} from './session-export.ts';
