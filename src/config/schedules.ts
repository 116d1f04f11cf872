// The `schedules` section, resolved (docs/schedules.md): each expression and zone read by the
// calendar now, so a bad one stops the daemon at start naming its schedule, and each task's
// assignee and repository checked against the profiles and repositories configured.
import { readCalendar } from './calendar.js';
import { repoProblem } from './workspaces.js';
import type { Profile, RawConfig, ScheduleConfig, WorkspacesConfig } from './schema.js';

type Fail = (key: string, message: string) => Error;

export function resolveSchedules(
  raw: RawConfig['schedules'],
  profiles: Record<string, Profile>,
  repos: WorkspacesConfig['repos'],
  defaultProfile: string,
  fail: Fail,
): Record<string, ScheduleConfig> {
  const out: Record<string, ScheduleConfig> = {};
  for (const [name, s] of Object.entries(raw)) {
    const at = `schedules.${name}`;
    const timezone = s.timezone ?? 'UTC';
    const calendar = readCalendar(s.cron, timezone);
    if (typeof calendar === 'string')
      throw fail(
        s.timezone && calendar.includes('time zone') ? `${at}.timezone` : `${at}.cron`,
        calendar,
      );
    const assignee = s.task.assignee ?? null;
    if (assignee !== null && !Object.hasOwn(profiles, assignee))
      throw fail(`${at}.task.assignee`, `no profile named "${assignee}"`);
    const repo = s.task.repo ?? null;
    const problem =
      repo === null
        ? null
        : repoProblem(
            { workspaces: { repos }, workers: { defaultProfile, profiles } },
            repo,
            assignee,
          );
    if (problem) throw fail(`${at}.task.repo`, problem);
    out[name] = {
      name,
      cron: s.cron,
      timezone,
      task: {
        title: s.task.title,
        body: s.task.body ?? '',
        assignee,
        repo,
        priority: s.task.priority ?? 0,
      },
      overlap: s.overlap ?? 'skip',
      enabled: s.enabled ?? true,
    };
  }
  return out;
}
