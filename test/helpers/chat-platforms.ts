// What the chat-platform tests share: a breaker that opens and probes within a second, and the
// Matrix double's options as a platform's config names them.
import type { MatrixDouble } from './matrix-double.js';

export const quickBreaker = {
  timeoutMs: 1000,
  errorThresholdPercentage: 50,
  resetTimeoutMs: 300,
  volumeThreshold: 2,
};

/** A matrix platform's options for the double, polling every second. */
export function matrixOptions(mx: MatrixDouble) {
  return { homeserver: mx.url, accessToken: mx.token, userId: mx.userId, pollTimeoutSeconds: 1 };
}
