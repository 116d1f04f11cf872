// A run's folder written in one trip to libuv's pool (src/kanban/dispatch/run-files.ts): the
// folder made (and its parents), each file made and written whole, the log opened for appending.
// Node's fs writes a file in three trips (open, write, close), each a promise settled on the
// event loop: a run's folder took seven, which cost the daemon more than the files themselves on
// a fast disk. Nothing else here: which files, what they hold, are the caller's.
//
// writeFolder(dir, names, texts, logPath) -> Promise<fd>: the log's descriptor, open for appending
// (close-on-exec). Rejects with an Error whose code is the errno's name, and whose message names
// the call and the path, as Node's fs does ("ENOSPC: ..., open '/data/runs/r_1/task.json'"). A
// failure part-way leaves what was written: the caller decides what a half-made folder means.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <node_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "napi-util.h"

typedef struct folder_job {
  napi_async_work work;
  napi_deferred deferred;
  char *dir, *log;
  size_t count;
  char **paths;
  char **texts;
  size_t *lengths;
  int fd;
  int err;
  const char *syscall;
  /** The path the failed call was given. */
  const char *path;
} folder_job_t;

static void free_folder_job(folder_job_t *job) {
  for (size_t i = 0; i < job->count; i++) {
    if (job->paths) free(job->paths[i]);
    if (job->texts) free(job->texts[i]);
  }
  free(job->paths);
  free(job->texts);
  free(job->lengths);
  free(job->dir);
  free(job->log);
  free(job);
}

/** mkdir -p: the folder and any parent missing; an existing folder is fine. */
static int make_folder(char *path) {
  if (mkdir(path, 0777) == 0) return 0;
  if (errno == EEXIST) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : (errno = EEXIST, -1);
  }
  if (errno != ENOENT) return -1;
  char *slash = strrchr(path, '/');
  if (!slash || slash == path) return -1;
  *slash = '\0';
  int made = make_folder(path);
  *slash = '/';
  if (made != 0) return -1;
  return mkdir(path, 0777) == 0 || errno == EEXIST ? 0 : -1;
}

static int write_whole(int fd, const char *text, size_t length) {
  while (length > 0) {
    ssize_t n = write(fd, text, length);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    text += n;
    length -= (size_t)n;
  }
  return 0;
}

/** open(2), again while a signal interrupts it. */
static int open_file(const char *path, int flags) {
  int fd;
  do fd = open(path, flags | O_CLOEXEC, 0666);
  while (fd < 0 && errno == EINTR);
  return fd;
}

/** Records what failed (errno, the call, its path) for write_done to reject with; -1. */
static int failed(folder_job_t *job, int err, const char *syscall, const char *path) {
  job->err = err;
  job->syscall = syscall;
  job->path = path;
  return -1;
}

/** The folder, its files and the log's descriptor; 0, or -1 with what failed recorded. */
static int write_folder_now(folder_job_t *job) {
  if (make_folder(job->dir) != 0) return failed(job, errno, "mkdir", job->dir);
  for (size_t i = 0; i < job->count; i++) {
    int fd = open_file(job->paths[i], O_WRONLY | O_CREAT | O_TRUNC);
    if (fd < 0) return failed(job, errno, "open", job->paths[i]);
    int wrote = write_whole(fd, job->texts[i], job->lengths[i]);
    int why = errno;
    // A close that fails after a whole write (NFS reporting ENOSPC late) is a failed write.
    int closed = close(fd);
    if (wrote != 0 || closed != 0)
      return failed(job, wrote != 0 ? why : errno, "write", job->paths[i]);
  }
  job->fd = open_file(job->log, O_WRONLY | O_CREAT | O_APPEND);
  return job->fd < 0 ? failed(job, errno, "open", job->log) : 0;
}

static void write_on_thread(napi_env env, void *data) {
  (void)env;
  write_folder_now(data);
}

static void write_done(napi_env env, napi_status status, void *data) {
  folder_job_t *job = data;
  napi_value result;
  int err = status != napi_ok ? ECANCELED : job->err;
  if (err) {
    if (job->fd >= 0) close(job->fd);
    const char *name = errno_name(err);
    char message[PATH_MAX + 256];
    snprintf(message, sizeof message, "%s: %s, %s '%s'", name, strerror(err),
             job->syscall ? job->syscall : "write", job->path ? job->path : job->dir);
    result = code_error(env, name, message);
    napi_value value;
    napi_create_string_utf8(env, job->syscall ? job->syscall : "write", NAPI_AUTO_LENGTH, &value);
    napi_set_named_property(env, result, "syscall", value);
    napi_create_string_utf8(env, job->path ? job->path : job->dir, NAPI_AUTO_LENGTH, &value);
    napi_set_named_property(env, result, "path", value);
    napi_create_int32(env, -err, &value);
    napi_set_named_property(env, result, "errno", value);
    napi_reject_deferred(env, job->deferred, result);
  } else {
    napi_create_int32(env, job->fd, &result);
    napi_resolve_deferred(env, job->deferred, result);
  }
  napi_delete_async_work(env, job->work);
  free_folder_job(job);
}

static napi_value write_folder(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value args[4];
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  uint32_t names = 0, texts = 0;
  bool arrays = false, texts_array = false;
  if (argc == 4) {
    napi_is_array(env, args[1], &arrays);
    napi_is_array(env, args[2], &texts_array);
  }
  if (arrays && texts_array) {
    napi_get_array_length(env, args[1], &names);
    napi_get_array_length(env, args[2], &texts);
  }
  folder_job_t *job = calloc(1, sizeof *job);
  if (!job) {
    napi_throw_error(env, "ENOMEM", "cannot write a run folder");
    return NULL;
  }
  job->fd = -1;
  int ok = arrays && texts_array && names == texts;
  if (ok) {
    job->dir = js_string(env, args[0], NULL);
    job->log = js_string(env, args[3], NULL);
    job->paths = calloc(names + 1, sizeof(char *));
    job->texts = calloc(names + 1, sizeof(char *));
    job->lengths = calloc(names + 1, sizeof(size_t));
    ok = job->dir && job->log && job->paths && job->texts && job->lengths;
  }
  for (uint32_t i = 0; ok && i < names; i++) {
    napi_value name, text;
    napi_get_element(env, args[1], i, &name);
    napi_get_element(env, args[2], i, &text);
    char *file = js_string(env, name, NULL);
    job->texts[i] = js_string(env, text, &job->lengths[i]);
    job->count = i + 1;
    if (!file || !job->texts[i] || strchr(file, '/') || !*file) {
      free(file);
      ok = 0;
      break;
    }
    size_t size = strlen(job->dir) + strlen(file) + 2;
    job->paths[i] = malloc(size);
    if (job->paths[i]) snprintf(job->paths[i], size, "%s/%s", job->dir, file);
    free(file);
    ok = job->paths[i] != NULL;
  }
  if (!ok) {
    free_folder_job(job);
    napi_throw_type_error(env, NULL,
                          "writeFolder(dir, names, texts, logPath): strings, and file names "
                          "without a slash, one text each");
    return NULL;
  }
  napi_value promise, resource;
  napi_create_string_utf8(env, "gatehouse:run-folder", NAPI_AUTO_LENGTH, &resource);
  if (napi_create_promise(env, &job->deferred, &promise) != napi_ok ||
      napi_create_async_work(env, NULL, resource, write_on_thread, write_done, job, &job->work) !=
          napi_ok ||
      napi_queue_async_work(env, job->work) != napi_ok) {
    if (job->work) napi_delete_async_work(env, job->work);
    free_folder_job(job);
    napi_throw_error(env, "ENOMEM", "cannot write a run folder");
    return NULL;
  }
  return promise;
}

/** Adds writeFolder to the module's exports (called by the module's init, in spawn.c). */
void run_folder_init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "writeFolder", NAPI_AUTO_LENGTH, write_folder, NULL, &fn);
  napi_set_named_property(env, exports, "writeFolder", fn);
}
