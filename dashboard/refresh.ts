// What changed, marked for the next refresh: a view marks, live.ts refreshes (it registers its
// scheduler here, so the views need not import it).
import { COLUMNS, state } from './state';

let schedule: () => void = () => {};

/** The refresher: live.ts's, once it is loaded. */
export function whenMarked(refresh: () => void) {
  schedule = refresh;
}

export function markBoard() {
  state.dirty.columns = new Set(COLUMNS);
  state.dirty.counts = true;
  schedule();
}

export function markAll() {
  state.dirty = {
    columns: new Set(COLUMNS),
    counts: true,
    platforms: true,
    detail: true,
    chart: true,
  };
  schedule();
}
