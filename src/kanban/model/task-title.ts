// The one rule for a task's title, whatever its origin (API, CLI, chat): 1 to 500 characters
// counted as code points, not blank: at least one character that is neither white space nor
// invisible (zero-width and other format characters, control characters, lone surrogates).
import { AppError } from '../../errors.js';

export const TITLE_MAX = 500;
/** Matches a visible character; the API schema uses the same pattern (ajv compiles it with u). */
export const TITLE_VISIBLE = '[^\\s\\p{Cf}\\p{Cc}\\p{Cs}]';
const visible = new RegExp(TITLE_VISIBLE, 'u');

/** What is wrong with `title`, or null when it is a title. */
export function titleProblem(title: string): string | null {
  if (!visible.test(title)) return 'a title needs at least one visible character';
  let length = 0;
  for (const _ of title) if (++length > TITLE_MAX) break;
  if (length > TITLE_MAX) return `a title is at most ${TITLE_MAX} characters`;
  return null;
}

/** Throws VALIDATION_FAILED when `title` breaks the rule. */
export function checkTitle(title: string): void {
  const problem = titleProblem(title);
  if (problem !== null) throw new AppError('VALIDATION_FAILED', `title: ${problem}`);
}
