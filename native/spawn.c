// gatehouse's process starter for Linux (src/proc/start-process.ts): posix_spawn, which glibc
// makes with vfork (the daemon's memory is not copied: a fork of a 100 MB daemon cost it 2 ms
// of CPU a worker), in a session and process group of its own, stdin from /dev/null, stdout and
// stderr to one descriptor, every other descriptor closed, signals as a new program expects
// them; then its exit told once, from a pidfd the event loop polls. Nothing else here: which
// program, its arguments and environment are the caller's.
//
// probe() throws when this kernel cannot watch a process (no pidfd_open, or a seccomp filter
// refusing it), so that a daemon says so at start rather than failing each worker.
// start(file, argv, envp, cwd, outputFd, onExit) -> pid. Throws an Error whose code is the
// errno's name (ENOENT, EACCES, ...) when nothing was started. onExit(code, signal, reaped) is
// called once, on the event loop, when the process has ended: code is its exit status or -1,
// signal the number that ended it or 0, reaped true when this starter reaped it (until then its
// pid and group could not be reused) and false when something else of the process did (how it
// ended is then not known). The watch does not keep the event loop alive; an environment that
// ends (a worker thread's) closes its watches without telling anyone.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <node_api.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "napi-util.h"

/** Between tries when the pidfd says "ended" and there is nothing to reap yet. */
#define RETRY_MS 50

typedef struct watch {
  uv_poll_t poll;
  uv_timer_t retry;
  /** Handles still to close before it is freed. */
  int open_handles;
  int pidfd;
  pid_t pid;
  napi_env env;
  napi_ref on_exit;
  napi_async_context context;
  struct watches *list;
  struct watch *prev, *next;
} watch_t;

/** An environment's watches not yet ended: closed with it. */
typedef struct watches {
  watch_t *first;
  /** libuv handles of its watches not yet closed (two a watch). */
  int handles;
  /** Starts queued and not yet back on the event loop. */
  int starting;
  /** The environment is ending, and waits for `handles` to reach 0 (see on_env_cleanup). */
  napi_async_cleanup_hook_handle ending;
} watches_t;

static void free_strings(char **strings) {
  if (!strings) return;
  for (char **s = strings; *s; s++) free(*s);
  free(strings);
}

/** A JS array of strings as a NULL-ended C array, or NULL. */
static char **c_strings(napi_env env, napi_value array) {
  uint32_t n;
  if (napi_get_array_length(env, array, &n) != napi_ok) return NULL;
  char **out = calloc(n + 1, sizeof(char *));
  if (!out) return NULL;
  for (uint32_t i = 0; i < n; i++) {
    napi_value item;
    if (napi_get_element(env, array, i, &item) != napi_ok ||
        !(out[i] = js_string(env, item, NULL))) {
      free_strings(out);
      return NULL;
    }
  }
  return out;
}

static void unlist(watch_t *w) {
  if (w->prev) w->prev->next = w->next;
  else if (w->list->first == w) w->list->first = w->next;
  if (w->next) w->next->prev = w->prev;
  w->prev = w->next = NULL;
}

/** Ends a watch list whose environment has ended, once nothing of it is left. */
static void maybe_free_list(watches_t *list) {
  if (list->ending && list->handles == 0 && list->starting == 0) {
    napi_remove_async_cleanup_hook(list->ending);
    free(list);
  }
}

static void on_closed(uv_handle_t *handle) {
  watch_t *w = handle->data;
  watches_t *list = w->list;
  if (--w->open_handles == 0) free(w);
  // The last: the environment may go on ending (and unload this code).
  list->handles -= 1;
  maybe_free_list(list);
}

/**
 * Its handles closed, and (while its environment lives) its references dropped; `w` is freed
 * once libuv is done with it. An environment that ends drops its references itself.
 */
static void end_watch(watch_t *w, int env_alive) {
  unlist(w);
  close(w->pidfd);
  if (env_alive) {
    napi_async_destroy(w->env, w->context);
    napi_delete_reference(w->env, w->on_exit);
  }
  uv_close((uv_handle_t *)&w->retry, on_closed);
  uv_close((uv_handle_t *)&w->poll, on_closed);
}

static void on_readable(uv_poll_t *poll, int status, int events);

static void on_retry(uv_timer_t *timer) {
  watch_t *w = timer->data;
  uv_poll_start(&w->poll, UV_READABLE, on_readable);
}

static void on_readable(uv_poll_t *poll, int status, int events) {
  (void)events;
  watch_t *w = poll->data;
  siginfo_t info;
  memset(&info, 0, sizeof info);
  int reaped;
  do reaped = waitid(P_PID, w->pid, &info, WEXITED | WNOHANG);
  while (reaped != 0 && errno == EINTR);
  if (reaped == 0 && info.si_pid == 0) {
    // Not ended yet (a poll error, a thread of it still exiting): asked again a little later,
    // never in a busy loop. libuv stopped the poll itself on an error.
    if (status == 0) uv_poll_stop(poll);
    uv_timer_start(&w->retry, on_retry, RETRY_MS, 0);
    return;
  }
  uv_poll_stop(poll);
  napi_env env = w->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value callback, global, args[3];
  napi_get_reference_value(env, w->on_exit, &callback);
  napi_get_global(env, &global);
  // reaped != 0: not ours to reap any more (ECHILD), so ended, how not known.
  int exited = reaped == 0 && info.si_code == CLD_EXITED;
  int killed = reaped == 0 && (info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED);
  napi_create_int32(env, exited ? info.si_status : -1, &args[0]);
  napi_create_int32(env, killed ? info.si_status : 0, &args[1]);
  napi_get_boolean(env, reaped == 0, &args[2]);
  // As a callback from native code: the promises it settles run before the loop goes on.
  napi_value ignored;
  napi_make_callback(env, w->context, global, callback, 3, args, &ignored);
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (pending) {
    // Thrown by the listener: the process's uncaughtException, as from any other callback.
    napi_value err;
    napi_get_and_clear_last_exception(env, &err);
    napi_fatal_exception(env, err);
  }
  napi_close_handle_scope(env, scope);
  end_watch(w, 1);
}

/**
 * The environment ends (a worker thread's, or the process's): its watches go, nobody told. It
 * waits until libuv has closed their handles, whose close callbacks are in this code, which it
 * unloads next.
 */
static void on_env_cleanup(napi_async_cleanup_hook_handle hook, void *data) {
  watches_t *list = data;
  list->ending = hook;
  while (list->first) end_watch(list->first, 0);
  maybe_free_list(list);
}

/** Ends and reaps a process just started that cannot be watched: it is ours, not yet reaped. */
static void abandon(pid_t pid) {
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
  }
}

/**
 * Every signal, glibc's two internal ones (32 and 33) included: its sigfillset leaves them out,
 * and its posix_spawn then leaves them ignored in the new program, where a fork and exec (as
 * child_process's) leaves none ignored.
 */
static void every_signal(sigset_t *set) {
  sigfillset(set);
#ifdef __GLIBC__
  unsigned long *words = (unsigned long *)set;
  const int bits = 8 * sizeof(unsigned long);
  for (int sig = 32; sig <= 33; sig++) words[(sig - 1) / bits] |= 1UL << ((sig - 1) % bits);
#endif
}

/** A descriptor argument: a whole number, not negative; -1 when it is not one. */
static int fd_arg(napi_env env, napi_value value) {
  napi_valuetype type;
  double number;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_number) return -1;
  napi_get_value_double(env, value, &number);
  return number >= 0 && number <= 0x7fffffff && floor(number) == number ? (int)number : -1;
}

static napi_value probe(napi_env env, napi_callback_info info) {
  (void)info;
  int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
  if (fd < 0) throw_errno(env, errno, "this kernel cannot watch a process (pidfd_open)");
  else close(fd);
  return NULL;
}

/** One start: made on the event loop, spawned on the threadpool, its watch set up back on the loop. */
typedef struct start_job {
  napi_async_work work;
  napi_deferred deferred;
  napi_ref on_exit;
  watches_t *list;
  char *file, **argv, **envp, *cwd;
  /** The caller's output, duplicated: the caller may close its own as soon as start returns. */
  int out;
  /** What failed (0: nothing), and in which step. */
  int err;
  const char *step;
  pid_t pid;
  int pidfd;
} start_job_t;

static void free_job(start_job_t *job) {
  if (job->out >= 0) close(job->out);
  free(job->file);
  free_strings(job->argv);
  free_strings(job->envp);
  free(job->cwd);
  free(job);
}

/** The start itself, on a thread of the pool: the event loop goes on while the child execs. */
static void start_on_thread(napi_env env, void *data) {
  (void)env;
  start_job_t *job = data;
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  int actions_made = posix_spawn_file_actions_init(&actions) == 0;
  int attr_made = posix_spawnattr_init(&attr) == 0;
  sigset_t none, all;
  sigemptyset(&none);
  every_signal(&all);
  // Each step checked: one dropped silently (ENOMEM) would leak the daemon's descriptors into
  // the worker, or start it in the daemon's directory.
  int err = !actions_made || !attr_made ? ENOMEM : 0;
  if (!err) err = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (!err) err = posix_spawn_file_actions_adddup2(&actions, job->out, 1);
  if (!err) err = posix_spawn_file_actions_adddup2(&actions, job->out, 2);
  if (!err) err = posix_spawn_file_actions_addchdir_np(&actions, job->cwd);
  if (!err) err = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  if (!err) err = posix_spawnattr_setsigmask(&attr, &none);
  if (!err) err = posix_spawnattr_setsigdefault(&attr, &all);
  if (!err)
    err = posix_spawnattr_setflags(
        &attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  if (err) job->step = "cannot describe the start";
  if (!err) {
    err = posix_spawn(&job->pid, job->file, &actions, &attr, job->argv, job->envp);
    if (err) job->step = NULL;
  }
  if (!err) {
    job->pidfd = (int)syscall(SYS_pidfd_open, job->pid, 0);
    if (job->pidfd < 0) {
      err = errno;
      job->step = "cannot watch the started process (pidfd_open)";
      abandon(job->pid);
    }
  }
  job->err = err;
  if (actions_made) posix_spawn_file_actions_destroy(&actions);
  if (attr_made) posix_spawnattr_destroy(&attr);
}

/**
 * The started process watched from the event loop (its exit told through job->on_exit, which it
 * takes over): NULL, or the error why it cannot be, the process then ended and reaped.
 */
static napi_value watch_started(napi_env env, start_job_t *job) {
  watches_t *list = job->list;
  uv_loop_t *loop = NULL;
  watch_t *w = calloc(1, sizeof *w);
  if (!w || napi_get_uv_event_loop(env, &loop) != napi_ok) {
    free(w);
    close(job->pidfd);
    abandon(job->pid);
    return code_error(env, "ENOMEM", "cannot watch a process");
  }
  w->list = list;
  uv_timer_init(loop, &w->retry);
  w->retry.data = w;
  if (uv_poll_init(loop, &w->poll, job->pidfd) != 0) {
    // A poll whose init failed is not libuv's; the timer is, and is closed.
    close(job->pidfd);
    abandon(job->pid);
    w->open_handles = 1;
    list->handles += 1;
    uv_close((uv_handle_t *)&w->retry, on_closed);
    return code_error(env, "EIO", "cannot watch the started process (uv_poll_init)");
  }
  w->open_handles = 2;
  list->handles += 2;
  w->pidfd = job->pidfd;
  w->pid = job->pid;
  w->env = env;
  w->poll.data = w;
  w->on_exit = job->on_exit;
  job->on_exit = NULL;
  napi_value name;
  napi_create_string_utf8(env, "gatehouse:process", NAPI_AUTO_LENGTH, &name);
  napi_async_init(env, NULL, name, &w->context);
  w->next = list->first;
  if (w->next) w->next->prev = w;
  list->first = w;
  uv_poll_start(&w->poll, UV_READABLE, on_readable);
  uv_unref((uv_handle_t *)&w->poll);
  uv_unref((uv_handle_t *)&w->retry);
  return NULL;
}

/** Back on the event loop: the process watched and its pid told, or why nothing started. */
static void start_done(napi_env env, napi_status status, void *data) {
  start_job_t *job = data;
  watches_t *list = job->list;
  list->starting -= 1;
  if (list->ending) {
    // The environment ended meanwhile: nobody is told, as its other watches (a process started
    // goes on, unwatched, as theirs do).
    if (job->pidfd >= 0) close(job->pidfd);
    napi_delete_reference(env, job->on_exit);
    napi_delete_async_work(env, job->work);
    free_job(job);
    maybe_free_list(list);
    return;
  }
  int err = status != napi_ok ? ECANCELED : job->err;
  napi_value error = NULL;
  if (err) {
    char what[768];
    if (job->step) snprintf(what, sizeof what, "%s", job->step);
    else snprintf(what, sizeof what, "%s (in %s)", job->file, job->cwd);
    snprintf(what + strlen(what), sizeof what - strlen(what), ": %s", strerror(err));
    error = code_error(env, errno_name(err), what);
  } else {
    error = watch_started(env, job);
  }
  if (error) {
    napi_reject_deferred(env, job->deferred, error);
  } else {
    napi_value pid;
    napi_create_int32(env, job->pid, &pid);
    napi_resolve_deferred(env, job->deferred, pid);
  }
  if (job->on_exit) napi_delete_reference(env, job->on_exit);
  napi_delete_async_work(env, job->work);
  free_job(job);
}

static napi_value start(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value args[6];
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  napi_valuetype type = napi_undefined;
  if (argc == 6) napi_typeof(env, args[5], &type);
  int output = argc == 6 ? fd_arg(env, args[4]) : -1;
  if (output < 0 || type != napi_function) {
    napi_throw_type_error(env, NULL, "start(file, argv, envp, cwd, outputFd, onExit)");
    return NULL;
  }
  start_job_t *job = calloc(1, sizeof *job);
  if (!job) {
    throw_errno(env, ENOMEM, "cannot start a process");
    return NULL;
  }
  job->pidfd = -1;
  job->file = js_string(env, args[0], NULL);
  job->argv = c_strings(env, args[1]);
  job->envp = c_strings(env, args[2]);
  job->cwd = js_string(env, args[3], NULL);
  // Above the standard three, so that making them does not close it first (a daemon started
  // with a standard descriptor closed opens its files there).
  job->out = fcntl(output, F_DUPFD_CLOEXEC, 3);
  if (!job->file || !job->argv || !job->envp || !job->cwd) {
    free_job(job);
    napi_throw_type_error(env, NULL, "start: file, argv, envp and cwd must be strings");
    return NULL;
  }
  if (job->out < 0) {
    int why = errno;
    free_job(job);
    throw_errno(env, why, "the output descriptor");
    return NULL;
  }
  void *data = NULL;
  napi_get_instance_data(env, &data);
  job->list = data;
  napi_value promise, name;
  napi_create_string_utf8(env, "gatehouse:start", NAPI_AUTO_LENGTH, &name);
  if (napi_create_promise(env, &job->deferred, &promise) != napi_ok ||
      napi_create_reference(env, args[5], 1, &job->on_exit) != napi_ok ||
      napi_create_async_work(env, NULL, name, start_on_thread, start_done, job, &job->work) !=
          napi_ok ||
      napi_queue_async_work(env, job->work) != napi_ok) {
    // A promise made is left pending: nothing can settle it, and nothing was started.
    if (job->on_exit) napi_delete_reference(env, job->on_exit);
    if (job->work) napi_delete_async_work(env, job->work);
    free_job(job);
    throw_errno(env, ENOMEM, "cannot start a process");
    return NULL;
  }
  job->list->starting += 1;
  return promise;
}

/** writeFolder (run-folder.c) and procInodeTimes (proc-scan.c), which share this module. */
void run_folder_init(napi_env env, napi_value exports);
void proc_scan_init(napi_env env, napi_value exports);

NAPI_MODULE_INIT() {
  // Freed as the environment ends, its last use (on_env_cleanup).
  watches_t *list = calloc(1, sizeof *list);
  if (!list || napi_set_instance_data(env, list, NULL, NULL) != napi_ok ||
      napi_add_async_cleanup_hook(env, on_env_cleanup, list, NULL) != napi_ok) {
    free(list);
    napi_throw_error(env, "ENOMEM", "cannot load the process starter");
    return NULL;
  }
  napi_value fn;
  napi_create_function(env, "start", NAPI_AUTO_LENGTH, start, NULL, &fn);
  napi_set_named_property(env, exports, "start", fn);
  napi_create_function(env, "probe", NAPI_AUTO_LENGTH, probe, NULL, &fn);
  napi_set_named_property(env, exports, "probe", fn);
  run_folder_init(env, exports);
  proc_scan_init(env, exports);
  return exports;
}
