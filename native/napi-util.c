// What gatehouse's native files share (see napi-util.h).
#define _GNU_SOURCE
#include "napi-util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *js_string(napi_env env, napi_value value, size_t *length) {
  size_t n;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &n) != napi_ok) return NULL;
  char *out = malloc(n + 1);
  if (!out) return NULL;
  napi_get_value_string_utf8(env, value, out, n + 1, &n);
  if (length) *length = n;
  return out;
}

const char *errno_name(int err) {
  const char *name = strerrorname_np(err);
  return name ? name : "EIO";
}

napi_value code_error(napi_env env, const char *code, const char *message) {
  napi_value code_value, text, error = NULL;
  napi_create_string_utf8(env, code, NAPI_AUTO_LENGTH, &code_value);
  napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &text);
  napi_create_error(env, code_value, text, &error);
  return error;
}

void throw_errno(napi_env env, int err, const char *what) {
  char message[768];
  snprintf(message, sizeof message, "%s: %s", what, strerror(err));
  napi_throw_error(env, errno_name(err), message);
}
