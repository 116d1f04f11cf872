// gatehouse's process starter for Linux (src/proc/start-process.ts): posix_spawn, which glibc
// makes with vfork (the daemon's memory is not copied: a fork of a 100 MB daemon cost it 2 ms
// of CPU a worker), in a session and process group of its own, stdin from /dev/null, stdout and
// stderr to one descriptor, every other descriptor closed, signals as a new program expects
// them; then its exit told once, from a pidfd the event loop polls. Nothing else here: which
// program, its arguments and environment are the caller's.
//
// start(file, argv, envp, cwd, outputFd, onExit) -> pid. Throws an Error whose code is the
// errno's name (ENOENT, EACCES, ...) when nothing was started. onExit(code, signal) is called
// once, on the event loop, when the process has ended and been reaped: code is its exit status
// or -1, signal the number that ended it or 0 (both unknown: reaped elsewhere). The poll does not
// keep the event loop alive.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
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

typedef struct {
  uv_poll_t poll;
  int pidfd;
  pid_t pid;
  napi_env env;
  napi_ref on_exit;
  napi_async_context context;
} watch_t;

static void throw_errno(napi_env env, int err, const char *what) {
  char message[768];
  snprintf(message, sizeof message, "%s: %s", what, strerror(err));
  const char *name = strerrorname_np(err);
  napi_throw_error(env, name ? name : "EIO", message);
}

/** A JS string as a new C string, or NULL (a pending exception) when it is not a string. */
static char *c_string(napi_env env, napi_value value) {
  size_t length;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &length) != napi_ok) return NULL;
  char *out = malloc(length + 1);
  if (!out) return NULL;
  napi_get_value_string_utf8(env, value, out, length + 1, &length);
  return out;
}

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
    napi_get_element(env, array, i, &item);
    out[i] = c_string(env, item);
    if (!out[i]) {
      free_strings(out);
      return NULL;
    }
  }
  return out;
}

static void on_closed(uv_handle_t *handle) { free(handle->data); }

static void on_readable(uv_poll_t *poll, int status, int events) {
  (void)status;
  (void)events;
  watch_t *w = poll->data;
  siginfo_t info;
  memset(&info, 0, sizeof info);
  // Readable once the process has ended; reaped here, so until now its pid was not reused.
  int reaped;
  do reaped = waitid(P_PID, w->pid, &info, WEXITED | WNOHANG);
  while (reaped != 0 && errno == EINTR);
  if (reaped == 0 && info.si_pid == 0) return;
  // Not ours to reap any more (ECHILD: reaped elsewhere): ended, how is not known.
  if (reaped != 0) info.si_code = 0;
  uv_poll_stop(poll);
  close(w->pidfd);
  napi_env env = w->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value callback, global, args[2];
  napi_get_reference_value(env, w->on_exit, &callback);
  napi_get_global(env, &global);
  int exited = info.si_code == CLD_EXITED;
  int killed = info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED;
  napi_create_int32(env, exited ? info.si_status : -1, &args[0]);
  napi_create_int32(env, killed ? info.si_status : 0, &args[1]);
  // As a callback from native code: the promises it settles run before the loop goes on.
  napi_value ignored;
  if (napi_make_callback(env, w->context, global, callback, 2, args, &ignored) ==
      napi_pending_exception) {
    // Thrown by the listener: the process's uncaughtException, as from any other callback.
    napi_value err;
    napi_get_and_clear_last_exception(env, &err);
    napi_fatal_exception(env, err);
  }
  napi_async_destroy(env, w->context);
  napi_delete_reference(env, w->on_exit);
  napi_close_handle_scope(env, scope);
  uv_close((uv_handle_t *)poll, on_closed);
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

static napi_value start(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value args[6];
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  if (argc < 6) {
    napi_throw_type_error(env, NULL, "start(file, argv, envp, cwd, outputFd, onExit)");
    return NULL;
  }
  int32_t output;
  napi_valuetype type;
  napi_typeof(env, args[5], &type);
  if (napi_get_value_int32(env, args[4], &output) != napi_ok || output < 0 ||
      type != napi_function) {
    napi_throw_type_error(env, NULL, "start(file, argv, envp, cwd, outputFd, onExit)");
    return NULL;
  }
  char *file = c_string(env, args[0]);
  char **argv = c_strings(env, args[1]);
  char **envp = c_strings(env, args[2]);
  char *cwd = c_string(env, args[3]);
  napi_value result = NULL;
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  // Above the standard three, so that making them does not close it first (a daemon started
  // with a standard descriptor closed opens its files there).
  int out = fcntl(output, F_DUPFD_CLOEXEC, 3);
  if (!file || !argv || !envp || !cwd) {
    napi_throw_type_error(env, NULL, "start: file, argv, envp and cwd must be strings");
    goto done;
  }
  if (out < 0) {
    throw_errno(env, errno, "the output descriptor");
    goto done;
  }
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out, 1);
  posix_spawn_file_actions_adddup2(&actions, out, 2);
  posix_spawn_file_actions_addchdir_np(&actions, cwd);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  sigset_t none, all;
  sigemptyset(&none);
  every_signal(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid;
  int err = posix_spawn(&pid, file, &actions, &attr, argv, envp);
  if (err != 0) {
    char what[512];
    snprintf(what, sizeof what, "%s (in %s)", file, cwd);
    throw_errno(env, err, what);
    goto done;
  }
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (pidfd < 0) {
    int why = errno;
    abandon(pid);
    throw_errno(env, why, "cannot watch the started process (pidfd_open)");
    goto done;
  }
  fcntl(pidfd, F_SETFD, FD_CLOEXEC);
  watch_t *w = calloc(1, sizeof *w);
  uv_loop_t *loop;
  napi_value name;
  napi_create_string_utf8(env, "gatehouse:process", NAPI_AUTO_LENGTH, &name);
  if (!w || napi_get_uv_event_loop(env, &loop) != napi_ok ||
      uv_poll_init(loop, &w->poll, pidfd) != 0) {
    free(w);
    close(pidfd);
    abandon(pid);
    napi_throw_error(env, "EIO", "cannot watch the started process (uv_poll_init)");
    goto done;
  }
  w->pidfd = pidfd;
  w->pid = pid;
  w->env = env;
  w->poll.data = w;
  napi_create_reference(env, args[5], 1, &w->on_exit);
  napi_async_init(env, NULL, name, &w->context);
  uv_poll_start(&w->poll, UV_READABLE, on_readable);
  uv_unref((uv_handle_t *)&w->poll);
  napi_create_int32(env, pid, &result);
done:
  if (out >= 0) close(out);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  free(file);
  free_strings(argv);
  free_strings(envp);
  free(cwd);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "start", NAPI_AUTO_LENGTH, start, NULL, &fn);
  napi_set_named_property(env, exports, "start", fn);
  return exports;
}
