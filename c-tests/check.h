/* check.h : tiny assertion helpers for the C API tests. */
#ifndef C_TESTS_CHECK_H
#define C_TESTS_CHECK_H
#include <stdio.h>

static int g_checks = 0, g_fails = 0;

#define CHECK(cond) do { g_checks++; if (!(cond)) { g_fails++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_EQ(a, b) do { long long va_ = (long long)(a), vb_ = (long long)(b); g_checks++; \
    if (va_ != vb_) { g_fails++; fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %s (%lld != %lld)\n", \
    __FILE__, __LINE__, #a, #b, va_, vb_); } } while (0)
#define CHECK_STR(a, b) do { g_checks++; if (strcmp((a), (b)) != 0) { g_fails++; \
    fprintf(stderr, "%s:%d: CHECK_STR failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, (a), (b)); } } while (0)
#define CHECKS_DONE(name) (printf("%s: %d checks, %d failed\n", name, g_checks, g_fails), g_fails ? 1 : 0)

#endif
