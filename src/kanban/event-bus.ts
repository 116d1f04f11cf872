// Tells listeners (websocket, dispatcher, platforms) about events after their transaction committed.
import type { BoardEvent } from './model/events.js';

export type EventListener = (event: BoardEvent) => void;

export class EventBus {
  private readonly listeners = new Set<EventListener>();

  constructor(private readonly onListenerError: (err: unknown) => void) {}

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A throwing listener is reported and never stops the others. */
  publish(events: readonly BoardEvent[]): void {
    for (const event of events) {
      for (const listener of [...this.listeners]) {
        try {
          listener(event);
        } catch (err) {
          this.onListenerError(err);
        }
      }
    }
  }
}
