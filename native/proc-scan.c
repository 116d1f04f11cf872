// The process table's listing in one call (src/proc/process-table.ts): every /proc/<pid> with
// the time its inode last changed, which proves a process older than a moment without reading
// its stat (src/proc/process-age.ts). The leftover check of each ending run lists the table;
// from JavaScript that was a readdir and a stat call per process, most of the check's time.
//
// procInodeTimes() -> Float64Array [pid, ctimeMs, pid, ctimeMs, ...]: ctimeMs as Node's
// Stats.ctimeMs, or NaN for a process gone between the listing and its stat. Throws an Error
// whose code is the errno's name when /proc cannot be read.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <node_api.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "napi-util.h"

/** A /proc entry's pid, or 0 when it is not one (self, sys, ...). */
static long pid_of(const char *name) {
  if (*name < '1' || *name > '9') return 0;
  long pid = 0;
  for (const char *c = name; *c; c++) {
    if (*c < '0' || *c > '9' || pid > 0x7fffffff / 10) return 0;
    pid = pid * 10 + (*c - '0');
  }
  return pid;
}

static napi_value proc_inode_times(napi_env env, napi_callback_info info) {
  (void)info;
  DIR *dir = opendir("/proc");
  if (!dir) {
    throw_errno(env, errno, "cannot list /proc");
    return NULL;
  }
  size_t capacity = 512, count = 0;
  double *pairs = malloc(capacity * 2 * sizeof(double));
  int failed = pairs == NULL;
  struct dirent *entry;
  int listed = 0;
  for (;;) {
    errno = 0;
    if (failed || (entry = readdir(dir)) == NULL) {
      listed = errno;
      break;
    }
    long pid = pid_of(entry->d_name);
    if (pid == 0) continue;
    if (count == capacity) {
      double *grown = realloc(pairs, capacity * 4 * sizeof(double));
      if (!grown) {
        failed = 1;
        break;
      }
      pairs = grown;
      capacity *= 2;
    }
    struct stat st;
    double ctime = NAN;
    if (fstatat(dirfd(dir), entry->d_name, &st, 0) == 0)
      ctime = (double)st.st_ctim.tv_sec * 1000 + (double)st.st_ctim.tv_nsec / 1e6;
    pairs[count * 2] = (double)pid;
    pairs[count * 2 + 1] = ctime;
    count++;
  }
  closedir(dir);
  if (failed || listed) {
    free(pairs);
    throw_errno(env, failed ? ENOMEM : listed, "cannot list /proc");
    return NULL;
  }
  napi_value buffer, array;
  void *data = NULL;
  if (napi_create_arraybuffer(env, count * 2 * sizeof(double), &data, &buffer) != napi_ok ||
      napi_create_typedarray(env, napi_float64_array, count * 2, buffer, 0, &array) != napi_ok) {
    free(pairs);
    throw_errno(env, ENOMEM, "cannot list /proc");
    return NULL;
  }
  if (count > 0) memcpy(data, pairs, count * 2 * sizeof(double));
  free(pairs);
  return array;
}

/** Adds procInodeTimes to the module's exports (called by the module's init, in spawn.c). */
void proc_scan_init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "procInodeTimes", NAPI_AUTO_LENGTH, proc_inode_times, NULL, &fn);
  napi_set_named_property(env, exports, "procInodeTimes", fn);
}
