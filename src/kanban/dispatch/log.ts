// The logger shape the dispatcher needs: pino's, with child loggers that carry a run's ids.
export interface DispatcherLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  child(bindings: Record<string, unknown>): DispatcherLog;
}
