/* The one C header this server uses. build.zig hands it to translate-c
 * (`@cImport` no longer exists in Zig 0.17), and src/*.zig import the result
 * as the module "lws". libwebsockets.h translates whole; Zig only analyses
 * the declarations we actually use, so its untranslatable inline helpers and
 * macros never matter. */
#include <libwebsockets.h>
#include <netinet/tcp.h>
