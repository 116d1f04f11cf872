// What gatehouse's native files share (napi-util.c): JS strings as C strings, errno errors.
#ifndef GATEHOUSE_NAPI_UTIL_H
#define GATEHOUSE_NAPI_UTIL_H
#include <node_api.h>
#include <stddef.h>

/** A JS string as a new UTF-8 C string (its length in bytes in `length`, unless NULL), or NULL. */
char *js_string(napi_env env, napi_value value, size_t *length);

/** The errno's name (ENOENT, ...), or "EIO" when it has none. */
const char *errno_name(int err);

/** An Error whose code is `code` and whose message is `message`. */
napi_value code_error(napi_env env, const char *code, const char *message);

/** Throws an Error whose code is the errno's name, its message "<what>: <strerror>". */
void throw_errno(napi_env env, int err, const char *what);
#endif
