/* Text from files made safe to show (safe_text.h), on cases worked by hand from the rules:
 * C0 controls and DEL as \xNN, C1 controls and the bidi embeddings, overrides and isolates as
 * \uNNNN, each byte of invalid UTF-8 (RFC 3629: overlong forms, surrogates, past U+10FFFF,
 * cut sequences) as \xNN; everything else as it is. JSON spells the same escapes its own way. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "safe_text.h"

static char *shown(const char *s, size_t n, unsigned flags)
{
    ls_buf b = {0};
    ls_buf_put_safe(&b, s, n, flags);
    return ls_buf_take(&b);
}

#define EXPECT(in, flags, want)                                                                                        \
    do {                                                                                                               \
        char *got_ = shown(in, sizeof(in) - 1, flags);                                                                 \
        ck_assert_msg(strcmp(got_, want) == 0, "%s: got '%s', want '%s'", #in, got_, want);                           \
        free(got_);                                                                                                    \
    } while (0)

START_TEST(controls_and_overrides_are_escaped)
{
    EXPECT("a\x1b]0;t\x07z", 0, "a\\x1b]0;t\\x07z");
    EXPECT("\x00\x01\x1f", 0, "\\x00\\x01\\x1f");
    EXPECT("del\x7f", 0, "del\\x7f");
    EXPECT("line\nand\ttab\r", 0, "line\\x0aand\\x09tab\\x0d");
    EXPECT("line\nand\ttab\r", LS_SAFE_LAYOUT, "line\nand\ttab\\x0d");
    /* C1: U+0080 is C2 80, U+009B (CSI) is C2 9B, U+009F is C2 9F; U+00A0 is printable */
    EXPECT("\xc2\x80\xc2\x9b\xc2\x9f\xc2\xa0", 0, "\\u0080\\u009b\\u009f\xc2\xa0");
    /* U+202A..U+202E are E2 80 AA..AE, U+2066..U+2069 are E2 81 A6..A9; their neighbours pass */
    EXPECT("\xe2\x80\xaa\xe2\x80\xae\xe2\x80\xaf", 0, "\\u202a\\u202e\xe2\x80\xaf");
    EXPECT("\xe2\x81\xa5\xe2\x81\xa6\xe2\x81\xa9\xe2\x81\xaa", 0, "\xe2\x81\xa5\\u2066\\u2069\xe2\x81\xaa");
    /* ordinary text: é, €, an emoji */
    EXPECT("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 0, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
}
END_TEST

START_TEST(invalid_utf8_is_escaped_byte_by_byte)
{
    EXPECT("\x9b", 0, "\\x9b");                         /* a lone continuation byte (8-bit CSI) */
    EXPECT("\xc0\x80", 0, "\\xc0\\x80");                /* overlong NUL */
    EXPECT("\xe0\x80\xaf", 0, "\\xe0\\x80\\xaf");       /* overlong '/' */
    EXPECT("\xed\xa0\x80", 0, "\\xed\\xa0\\x80");       /* a surrogate, U+D800 */
    EXPECT("\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80"); /* past U+10FFFF */
    EXPECT("\xf5\xff", 0, "\\xf5\\xff");
    EXPECT("ab\xe2\x80", 0, "ab\\xe2\\x80");            /* cut at the end */
    EXPECT("\xe2\x28\xa1", 0, "\\xe2(\\xa1");           /* a bad second byte: the rest read again */
}
END_TEST

START_TEST(a_stream_waits_for_a_cut_character)
{
    char out[LS_SAFE_MAX];
    size_t len;
    /* "€" (E2 82 AC) arriving in pieces: nothing until it is whole */
    ck_assert_uint_eq(ls_safe_step("\xe2", 1, 0, false, out, &len), 0);
    ck_assert_uint_eq(ls_safe_step("\xe2\x82", 2, 0, false, out, &len), 0);
    ck_assert_uint_eq(ls_safe_step("\xe2\x82\xac", 3, 0, false, out, &len), 3);
    ck_assert_uint_eq(len, 3);
    /* the same cut at the very end is invalid */
    ck_assert_uint_eq(ls_safe_step("\xe2\x82", 2, 0, true, out, &len), 1);
    ck_assert(len == 4 && memcmp(out, "\\xe2", 4) == 0);
    /* a byte that can start nothing is escaped at once */
    ck_assert_uint_eq(ls_safe_step("\xff", 1, 0, false, out, &len), 1);
}
END_TEST

START_TEST(json_strings_are_valid_json_and_utf8)
{
    static const char evil[] = "n\"\\\x1b[2J\x7f\xc2\x9b\xe2\x80\xae\xff\xc0\x80 ok";
    ls_buf b = {0};
    ls_buf_json_str(&b, evil);
    ck_assert_str_eq(b.s, "\"n\\\"\\\\\\u001b[2J\\u007f\\u009b\\u202e\\\\xff\\\\xc0\\\\x80 ok\"");
    ck_assert(ls_safe_is_plain(b.s, b.len, 0)); /* nothing left to escape: ASCII here */
    cJSON *j = cJSON_Parse(b.s);
    ck_assert_ptr_nonnull(j);
    /* what JSON readers get back: the characters themselves, and the invalid bytes as text */
    ck_assert_str_eq(j->valuestring, "n\"\\\x1b[2J\x7f\xc2\x9b\xe2\x80\xae\\xff\\xc0\\x80 ok");
    cJSON_Delete(j);
    ls_buf_free(&b);
}
END_TEST

/* Where text stops being UTF-8, and why, as CPython says it for the same bytes: its UTF-8
 * decoder is what torch's loader runs on a program's JSON. (python3 -c "b'...'.decode()":
 * "can't decode byte 0xe2 in position 0: invalid continuation byte", and so on.) */
START_TEST(utf8_check_says_what_cpython_says)
{
    static const struct {
        const char *s;
        size_t n, at;
        const char *why;
    } cases[] = {
        {"\xe2(\xa1", 3, 0, "invalid continuation byte"},
        {"ab\xe2\x82", 4, 2, "unexpected end of data"},
        {"\xc0\x80", 2, 0, "invalid start byte"},
        {"\xed\xa0\x80", 3, 0, "invalid continuation byte"},
        {"\xf4\x90\x80\x80", 4, 0, "invalid continuation byte"},
        {"0123456789\x9b", 11, 10, "invalid start byte"},
        {"caf\xc3\xa9 \xf0\x9f\x98\x80", 10, 10, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *why;
        ck_assert_uint_eq(ls_utf8_check(cases[i].s, cases[i].n, &why), cases[i].at);
        if (cases[i].why) ck_assert_str_eq(why, cases[i].why);
        else ck_assert_ptr_null(why);
    }
}
END_TEST

START_TEST(copy_cuts_at_a_whole_piece)
{
    char out[8];
    ck_assert_uint_eq(ls_safe_copy("ab\x1b" "cd", 5, 0, out, sizeof out), 7);
    ck_assert_str_eq(out, "ab\\x1bc");
    ck_assert_uint_eq(ls_safe_copy("abcd\x1b", 5, 0, out, sizeof out), 4); /* the escape does not fit */
    ck_assert_str_eq(out, "abcd");
    ck_assert(ls_safe_is_plain("caf\xc3\xa9", 5, 0));
    ck_assert(!ls_safe_is_plain("\xe2\x80\xae", 3, 0));
}
END_TEST

Suite *safe_text_suite(void)
{
    Suite *s = suite_create("safe_text");
    TCase *tc = tcase_create("safe_text");
    tcase_add_test(tc, controls_and_overrides_are_escaped);
    tcase_add_test(tc, invalid_utf8_is_escaped_byte_by_byte);
    tcase_add_test(tc, a_stream_waits_for_a_cut_character);
    tcase_add_test(tc, json_strings_are_valid_json_and_utf8);
    tcase_add_test(tc, copy_cuts_at_a_whole_piece);
    tcase_add_test(tc, utf8_check_says_what_cpython_says);
    suite_add_tcase(s, tc);
    return s;
}
