/* YCSB's status and summary lines cut from a file's bytes, one pass in C.
 *
 * The contract is that of the regular expressions in ycsb_status.py and
 * ycsb_summary.py: for an ASCII file whose every line of these kinds is plain,
 * the scanners give exactly what the regular expressions give; for any other
 * file they give None, and the regular expressions read it (and name the line
 * that is wrong). Declining is always safe; answering differently never is.
 * tests/test_importers_linescan.py holds them to that on the real samples, the
 * benchmark's generated output and mutated files.
 *
 * A status line:
 *   2026-11-22 02:38:50:305 1 sec: 100 operations; 100 current ops/sec; est … [READ: …] …
 * with blocks "[OP AverageLatency(us)=V]" (histogram, timeseries) or
 * "[OP: Count=V, Max=V, Min=V, Avg=V, (50=V, )90=V, 99=V, 99.9=V, 99.99=V]"
 * (hdrhistogram). A summary line: "[OP], Metric, value".
 *
 * Both functions take bytes and let go of the GIL while they scan, so the two
 * scanners of one file run on two cores. Results come back as bytes objects of
 * packed arrays (int64, float64, int32 string offsets) that numpy and pyarrow
 * wrap without a Python object per line.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <locale.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__APPLE__)
#include <xlocale.h>
#endif

/* ------------------------------------------------------------ growable buffers */

typedef struct {
    char *p;
    size_t n, cap;
    int failed;
} Buf;

static int buf_grow(Buf *b, size_t more) {
    if (b->failed) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + more) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) { b->failed = 1; return 0; }
    b->p = p;
    b->cap = cap;
    return 1;
}

static inline int buf_reserve(Buf *b, size_t more) {
    return b->n + more <= b->cap || buf_grow(b, more);
}

static inline void buf_put(Buf *b, const void *src, size_t len) {
    if (!len || !buf_reserve(b, len)) return;   /* memcpy into no buffer yet is undefined, even of 0 bytes */
    memcpy(b->p + b->n, src, len);
    b->n += len;
}

static inline void put_i64(Buf *b, int64_t v) { buf_put(b, &v, sizeof v); }
static inline void put_f64(Buf *b, double v) { buf_put(b, &v, sizeof v); }
static inline void put_i32(Buf *b, int32_t v) { buf_put(b, &v, sizeof v); }
static inline void put_u8(Buf *b, uint8_t v) { buf_put(b, &v, 1); }

/* a string column: the bytes one after the other, and n + 1 int32 offsets */
typedef struct {
    Buf chars, offsets;
} Strings;

static void strings_init(Strings *s) {
    memset(s, 0, sizeof *s);
    put_i32(&s->offsets, 0);
}

static inline void strings_put(Strings *s, const char *p, size_t len) {
    buf_put(&s->chars, p, len);
    put_i32(&s->offsets, (int32_t)s->chars.n);
}

static void buf_free(Buf *b) { free(b->p); }
static void strings_free(Strings *s) { buf_free(&s->chars); buf_free(&s->offsets); }

/* A buffer handed to Python without a copy: numpy and pyarrow wrap it (buffer
 * protocol, read-only) and keep it alive; its memory is freed with it. A copy of a
 * million-row column costs little, but fresh pages are slow to fault in here. */
typedef struct {
    PyObject_HEAD
    char *p;
    Py_ssize_t n;
} Packed;

static int packed_getbuffer(PyObject *self, Py_buffer *view, int flags) {
    Packed *b = (Packed *)self;
    static char empty[1];
    return PyBuffer_FillInfo(view, self, b->p ? b->p : empty, b->n, 1, flags);
}

static Py_ssize_t packed_length(PyObject *self) { return ((Packed *)self)->n; }

static void packed_dealloc(PyObject *self) {
    free(((Packed *)self)->p);
    Py_TYPE(self)->tp_free(self);
}

static PyBufferProcs packed_buffer = {packed_getbuffer, NULL};
static PySequenceMethods packed_sequence = {.sq_length = packed_length};

static PyTypeObject PackedType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "benchlib.importers._linescan.Packed",
    .tp_doc = "packed column bytes from the scanner (buffer protocol, read-only)",
    .tp_basicsize = sizeof(Packed),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = packed_dealloc,
    .tp_as_buffer = &packed_buffer,
    .tp_as_sequence = &packed_sequence,
};

/* the buffer's bytes as a Packed object, which takes its memory (NULL: no memory) */
static PyObject *buf_bytes(Buf *b) {
    Packed *out = PyObject_New(Packed, &PackedType);
    if (!out) return NULL;
    if (b->cap > b->n + (1 << 20)) {   /* give back what growing by doubling left over */
        char *p = realloc(b->p, b->n ? b->n : 1);
        if (p) b->p = p;
    }
    out->p = b->p;
    out->n = (Py_ssize_t)b->n;
    b->p = NULL;
    b->n = b->cap = 0;
    return (PyObject *)out;
}

/* ------------------------------------------------------------ bytes and numbers */

/* classes of bytes, a bit each (see init_classes) */
enum { DIGIT = 1, OP_END = 2, VALUE_END = 4, NOT_IN_OP = 8, NOT_IN_VALUE = 16, IN_REST = 32 };
static unsigned char cls[256];

static void init_classes(void) {
    for (int c = 0; c < 256; c++) {
        unsigned char f = 0;
        if (c >= '0' && c <= '9') f |= DIGIT;
        if (c < 33 || c == ':') f |= OP_END;               /* an op is [^\]:\s]+ */
        if (c < 33 || c == ',' || c == ']') f |= VALUE_END;   /* a value is [^,\]\s]+ */
        if (c == '[' || c == ']' || c == 0x7f) f |= NOT_IN_OP;
        if (c == '[' || c == '=' || c == 0x7f) f |= NOT_IN_VALUE;
        if (c == '[' || c == ':') f |= IN_REST;
        cls[c] = f;
    }
}

static inline int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* does text stand at p, ending by end? */
static int literal(const char *p, const char *end, const char *text, size_t len) {
    return (size_t)(end - p) >= len && memcmp(p, text, len) == 0;
}
#define LITERAL(p, end, s) literal((p), (end), (s), sizeof(s) - 1)

/* a run of digits from p (by end): where it stops, its value (exact to 15 digits:
 * the callers take no more) */
static const char *digits(const char *p, const char *end, double *value) {
    double v = 0;
    const char *q = p;
    while (q < end && is_digit((unsigned char)*q)) {
        v = v * 10 + (*q - '0');
        q++;
    }
    *value = v;
    return q;
}

static locale_t c_locale;

/* A value as Arrow's cast of its text to float64 gives it, for the forms Java
 * prints: "NaN", or -?D+(.D+)?([eE][+-]?D+)?; 0 for anything else (then the
 * caller declines and the regular expressions decide). Correctly rounded:
 * Clinger's fast path where the mantissa and the power of ten are exact
 * doubles, else strtod in the C locale. Infinite values become NaN, as
 * text.numbers() makes them. */
static int number(const char *p, const char *end, double *out) {
    static const double pow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    size_t len = (size_t)(end - p);
    if (len == 3 && memcmp(p, "NaN", 3) == 0) {
        *out = NAN;
        return 1;
    }
    const char *q = p;
    int neg = 0;
    if (q < end && *q == '-') { neg = 1; q++; }
    uint64_t mant = 0;
    int ndig = 0, frac = 0, exp10 = 0;
    const char *d0 = q;
    while (q < end && is_digit((unsigned char)*q)) {
        if (ndig < 19) { mant = mant * 10 + (uint64_t)(*q - '0'); if (mant) ndig++; }
        else exp10++;
        q++;
    }
    if (q == d0) return 0;
    if (q < end && *q == '.') {
        const char *f0 = ++q;
        while (q < end && is_digit((unsigned char)*q)) {
            if (ndig < 19) { mant = mant * 10 + (uint64_t)(*q - '0'); if (mant) ndig++; frac++; }
            q++;
        }
        if (q == f0) return 0;
    }
    int has_exp = 0;
    if (q < end && (*q == 'e' || *q == 'E')) {
        has_exp = 1;
        q++;
        if (q < end && (*q == '+' || *q == '-')) q++;
        const char *e0 = q;
        while (q < end && is_digit((unsigned char)*q)) q++;
        if (q == e0) return 0;
    }
    if (q != end) return 0;
    exp10 -= frac;
    double v;
    if (!has_exp && ndig < 19 && mant <= (1ULL << 53) && exp10 >= -22 && exp10 <= 22) {
        v = (double)mant;
        v = exp10 < 0 ? v / pow10[-exp10] : v * pow10[exp10];
        if (neg) v = -v;
    } else {
        char tmp[64];
        if (len >= sizeof tmp) return 0;
        memcpy(tmp, p, len);
        tmp[len] = 0;
        char *stop;
        v = strtod_l(tmp, &stop, c_locale);
        if (stop != tmp + len) return 0;
    }
    *out = isinf(v) ? NAN : v;
    return 1;
}

/* where the run of bytes from p that are not of the class "stop" stops (by end);
 * NULL when it goes on past longest bytes or has a byte of the class "bad" */
static inline const char *run_until(const char *p, const char *end, unsigned char stop, unsigned char bad,
                                    size_t longest) {
    const char *q = p;
    unsigned char seen = 0;
    while (q < end && !(cls[(unsigned char)*q] & stop)) seen |= cls[(unsigned char)*q++];
    return (size_t)(q - p) > longest || (seen & bad) ? NULL : q;
}

/* Calls line(state, start, end) for each line of [p, end) (without its "\n"); 0 as
 * soon as one returns -1 (a line that makes the file one for the regular
 * expressions), else 1. */
static int each_line(const char *p, const char *end, int (*line)(void *, const char *, const char *),
                     void *state) {
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (line(state, p, nl ? nl : end) < 0) return 0;
        p = nl ? nl + 1 : end;
    }
    return 1;
}

/* ------------------------------------------------------------ status lines */

enum { V_COUNT, V_MAX, V_MIN, V_AVG, V_P50, V_P90, V_P99, V_P999, V_P9999, N_VALUES };

typedef struct {
    Buf ts, ms, sec, ops, cur;               /* a row per status line */
    Buf line, hdr;                           /* a row per block */
    Buf value[N_VALUES];                     /* a column per figure, NaN where a block has none */
    int64_t blocks;
    Strings op;
    int any_avg, any_hdr;
} Status;

/* 0 <= v <= 9 for each of the n digits at p (known to be digits) */
static int two(const char *p) { return (p[0] - '0') * 10 + (p[1] - '0'); }

/* "yyyy-MM-dd HH:mm:ss:SSS " at p: milliseconds since 1970 (UTC), or 0 when p
 * holds no such date (the regular expressions then read the file) */
static int date_at(const char *p, const char *end, int64_t *ms) {
    if (end - p < 24 || p[4] != '-' || p[7] != '-' || p[10] != ' ' || p[13] != ':' || p[16] != ':'
        || p[19] != ':' || p[23] != ' ')
        return 0;
    static const unsigned char at[] = {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22};
    unsigned char all = DIGIT;
    for (size_t k = 0; k < sizeof at; k++) all &= cls[(unsigned char)p[at[k]]];
    if (!all) return 0;
    int64_t y = two(p) * 100 + two(p + 2), m = two(p + 5), d = two(p + 8);
    int hh = two(p + 11), mm = two(p + 14), ss = two(p + 17);
    int msec = two(p + 20) * 10 + (p[22] - '0');
    static const int mdays[] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0) && (y % 100 != 0 || y % 400 == 0);
    if (y < 1900 || m < 1 || m > 12 || d < 1 || d > mdays[m] + (leap && m == 2) || hh > 23 || mm > 59 || ss > 59)
        return 0;   /* the regular expressions' way (pyarrow's strptime) tells */
    /* days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil) */
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400, yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t days = era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
    *ms = ((days * 86400 + hh * 3600 + mm * 60 + ss) * 1000) + msec;
    return 1;
}

/* the block "[…]" opening at p (a "["), in a line ending at end: 1 and where it
 * closes (the "]"), or 0 when it is not of the two plain forms */
/* the value [^,\]\s]+ from q (by end) as a number: where it stops, or NULL when
 * it is none of the forms number() takes (or has a byte a value may not have) */
static inline const char *value(const char *q, const char *end, double *v) {
    /* most are whole numbers of a few digits: read in the one pass */
    const char *r = q;
    uint64_t m = 0;
    while (r < end && (unsigned char)(*r - '0') < 10) m = m * 10 + (uint64_t)(*r++ - '0');
    if (r > q && r - q <= 15 && (r == end || (cls[(unsigned char)*r] & VALUE_END))) {
        *v = (double)m;
        return r;
    }
    const char *stop = run_until(q, end, VALUE_END, NOT_IN_VALUE, 40);
    return stop && stop > q && number(q, stop, v) ? stop : NULL;
}

/* ", Max=" … at q: the keys of an hdrhistogram block, compared as one word each */
typedef struct {
    uint64_t word, mask;
    size_t len;
} Key;

static Key hdr_keys[8];

static void init_keys(void) {
    static const char *keys[] = {", Max=", ", Min=", ", Avg=", ", 50=", ", 90=", ", 99=", ", 99.9=", ", 99.99="};
    for (int k = 0; k < 8; k++) {
        size_t len = strlen(keys[k]);
        unsigned char ones[8] = {0};
        memset(ones, 0xFF, len);   /* the mask of its bytes, in memory order (any endianness) */
        hdr_keys[k].word = 0;
        memcpy(&hdr_keys[k].word, keys[k], len);
        memcpy(&hdr_keys[k].mask, ones, 8);
        hdr_keys[k].len = len;
    }
}

static inline int key_at(const char *q, const char *end, const Key *key) {
    if (end - q >= 8) {
        uint64_t w;
        memcpy(&w, q, 8);
        return (w & key->mask) == key->word;
    }
    return (size_t)(end - q) >= key->len && memcmp(q, &key->word, key->len) == 0;
}

static int block(Status *st, const char *p, const char *end, int64_t line, const char **close) {
    double v[N_VALUES];
    uint16_t has = 0;
    const char *op = p + 1, *op_end = run_until(op, end, OP_END, NOT_IN_OP, 64);
    if (!op_end || op_end == op || op_end >= end) return 0;
    const char *q;
    int hdr;
    if (*op_end == ':' && LITERAL(op_end, end, ": Count=")) {
        hdr = 1;
        q = op_end + 8;
        for (int k = 0; k < N_VALUES; k++) {
            if (k > 0) {
                if (!key_at(q, end, &hdr_keys[k - 1])) {
                    if (k == V_P50) continue;   /* YCSB before 0.18 prints no 50= */
                    return 0;
                }
                q += hdr_keys[k - 1].len;
            }
            if (!(q = value(q, end, &v[k]))) return 0;
            has |= (uint16_t)(1 << k);
        }
    } else if (*op_end == ' ' && LITERAL(op_end, end, " AverageLatency(us)=")) {
        hdr = 0;
        if (!(q = value(op_end + 20, end, &v[V_AVG]))) return 0;
        has = 1 << V_AVG;
    } else {
        return 0;
    }
    if (q >= end || *q != ']') return 0;
    *close = q;
    put_i64(&st->line, line);
    put_u8(&st->hdr, (uint8_t)hdr);
    for (int k = 0; k < N_VALUES; k++)
        if (has & (1 << k)) {
            while (st->value[k].n < (size_t)st->blocks * sizeof(double)) put_f64(&st->value[k], NAN);
            put_f64(&st->value[k], v[k]);
        }
    st->blocks++;
    strings_put(&st->op, op, (size_t)(op_end - op));
    if (hdr) st->any_hdr = 1; else st->any_avg = 1;
    return 1;
}

/* does the line [p, end) have " sec: " in it? */
static int has_sec(const char *p, const char *end) {
    for (const char *q = p; (q = memchr(q, ':', (size_t)(end - q))) != NULL; q++) {
        if (q - p >= 4 && end - q >= 2 && memcmp(q - 4, " sec: ", 6) == 0) return 1;
    }
    return 0;
}

/* the line [p, end): 1 a plain status line (its row and blocks added), 0 no status
 * line, -1 a line that makes the file one for the regular expressions */
static int status_line(void *state, const char *p, const char *end) {
    Status *st = state;
    int64_t ms;
    if (!date_at(p, end, &ms)) return has_sec(p, end) ? -1 : 0;
    const char *q = p + 24;
    double sec, ops, cur = NAN;
    const char *n1 = digits(q, end, &sec);
    if (n1 == q || n1 - q > 15 || !LITERAL(n1, end, " sec: ")) return has_sec(p, end) ? -1 : 0;
    q = n1 + 6;
    const char *o1 = digits(q, end, &ops);
    if (o1 == q || o1 - q > 15 || !LITERAL(o1, end, " operations; ")) return -1;   /* it has " sec: " */
    const char *c0 = o1 + 13, *rest = c0;
    const char *c1 = c0;
    while (c1 < end && *c1 != ' ') c1++;
    if (c1 - c0 > 32) return -1;
    if (c1 > c0 && LITERAL(c1, end, " current ops/sec; ")) {
        if (!number(c0, c1, &cur)) return -1;
        rest = c1 + 18;
    }
    int64_t line = (int64_t)(st->sec.n / sizeof(double));
    buf_put(&st->ts, p, 23);
    put_i64(&st->ms, ms);
    put_f64(&st->sec, sec);
    put_f64(&st->ops, ops);
    put_f64(&st->cur, cur);
    /* every "[" of the rest opens a block; the only ":" are those of "OP: Count=" */
    for (const char *r = rest; r < end; r++) {
        if (!(cls[(unsigned char)*r] & IN_REST)) continue;
        if (*r == '[') {
            const char *close;
            if (!block(st, r, end, line, &close)) return -1;
            r = close;
        } else if (*r == ':') {
            return -1;
        }
    }
    return 1;
}

static void status_free(Status *st) {
    Buf *bufs[] = {&st->ts, &st->ms, &st->sec, &st->ops, &st->cur, &st->line, &st->hdr};
    for (size_t k = 0; k < sizeof bufs / sizeof *bufs; k++) buf_free(bufs[k]);
    for (int k = 0; k < N_VALUES; k++) buf_free(&st->value[k]);
    strings_free(&st->op);
}

static int status_failed(Status *st) {
    Buf *bufs[] = {&st->ts, &st->ms, &st->sec, &st->ops, &st->cur, &st->line, &st->hdr,
                   &st->op.chars, &st->op.offsets};
    for (size_t k = 0; k < sizeof bufs / sizeof *bufs; k++)
        if (bufs[k]->failed) return 1;
    for (int k = 0; k < N_VALUES; k++)
        if (st->value[k].failed) return 1;
    return 0;
}

/* the scan's columns as a dict of Packed buffers; a figure no block has is absent */
static PyObject *status_dict(Status *st) {
    static const char *names[] = {"v_count", "v_max", "v_min", "v_avg", "v_p50", "v_p90", "v_p99", "v_p999",
                                  "v_p9999"};
    for (int k = 0; k < N_VALUES; k++)
        if (st->value[k].n)
            while (st->value[k].n < (size_t)st->blocks * sizeof(double)) put_f64(&st->value[k], NAN);
    if (status_failed(st)) return PyErr_NoMemory();
    PyObject *out = Py_BuildValue("{s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:i,s:i}",
                                  "ts", buf_bytes(&st->ts), "ms", buf_bytes(&st->ms), "sec", buf_bytes(&st->sec),
                                  "ops", buf_bytes(&st->ops), "cur", buf_bytes(&st->cur),
                                  "line", buf_bytes(&st->line), "hdr", buf_bytes(&st->hdr),
                                  "op_chars", buf_bytes(&st->op.chars), "op_offsets", buf_bytes(&st->op.offsets),
                                  "any_avg", st->any_avg, "any_hdr", st->any_hdr);
    for (int k = 0; out && k < N_VALUES; k++) {
        if (!st->value[k].n) continue;
        PyObject *col = buf_bytes(&st->value[k]);
        if (!col || PyDict_SetItemString(out, names[k], col) < 0) Py_CLEAR(out);
        Py_XDECREF(col);
    }
    return out;
}

static PyObject *scan_status(PyObject *Py_UNUSED(self), PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    Status st;
    memset(&st, 0, sizeof st);
    strings_init(&st.op);
    int plain;
    Py_BEGIN_ALLOW_THREADS
    plain = each_line(view.buf, (const char *)view.buf + view.len, status_line, &st);
    if (st.op.chars.n > INT32_MAX) plain = 0;
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    PyObject *out;
    if (status_failed(&st)) {
        out = PyErr_NoMemory();
    } else if (!plain) {
        out = Py_NewRef(Py_None);
    } else {
        out = status_dict(&st);
    }
    status_free(&st);
    return out;
}

/* ------------------------------------------------------------ summary lines */

/* the line [p, end) starts with a letter and has " latency raw data: " (the header
 * of raw data points, "OP latency raw data: op, timestamp(ms), latency(us)") */
static int raw_header(const char *p, const char *end) {
    static const char mark[] = " latency raw data: ";
    unsigned char c = (unsigned char)*p;
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))) return 0;
    for (const char *q = p; (q = memchr(q, ':', (size_t)(end - q))) != NULL; q++) {
        if (q - p >= 17 && end - q >= 2 && memcmp(q - 17, mark, sizeof mark - 1) == 0) return 1;
    }
    return 0;
}

/* The values are left to Arrow's cast (text.numbers): Java prints averages with up
 * to 17 digits, past the exact fast path of number(), and Arrow's parser is
 * faster than strtod for those. */
typedef struct {
    Strings col[3];   /* op, metric, value */
    Buf t_ms, dbl;    /* the metric as a number when it is all digits; a value in a double's text */
    int metrics_ok, raw;
} Summary;

static void summary_line(Summary *sm, const char *p, const char *close, const char *m0, const char *comma,
                         const char *e) {
    strings_put(&sm->col[0], p + 1, (size_t)(close - p - 1));
    strings_put(&sm->col[1], m0, (size_t)(comma - m0));
    strings_put(&sm->col[2], comma + 2, (size_t)(e - comma - 2));
    double t = NAN;
    const char *q = m0;
    while (q < comma && is_digit((unsigned char)*q)) q++;
    if (q == comma) {   /* a timeseries row "[OP], t_ms, avg" (or a histogram.verbose bucket) */
        if (comma - m0 > 15) sm->metrics_ok = 0;   /* past 2^53: exact only by Arrow's cast */
        digits(m0, comma, &t);
    }
    uint8_t dbl = 0;
    for (const char *c = comma + 2; c < e; c++)
        if (*c == '.' || *c == 'N' || *c == 'E') { dbl = 1; break; }
    put_f64(&sm->t_ms, t);
    put_u8(&sm->dbl, dbl);
}

/* the line [p, e): 1 a summary line "[OP], Metric, value" (its row added), 0 another
 * line, -1 one starting "[OP], " that is not whole (the regular expression names it);
 * other lines starting with "[" are not summary lines */
static int summary_line_at(void *state, const char *p, const char *e) {
    Summary *sm = state;
    if (p < e && *p == '[') {
        const char *close = memchr(p + 1, ']', (size_t)(e - p - 1));
        if (!close || !LITERAL(close, e, "], ")) return 0;
        const char *m0 = close + 3;
        const char *comma = memchr(m0, ',', (size_t)(e - m0));
        if (close == p + 1 || !comma || comma == m0 || !LITERAL(comma, e, ", ")) return -1;
        summary_line(sm, p, close, m0, comma, e);
        return 1;
    }
    if (!sm->raw && p < e && raw_header(p, e)) sm->raw = 1;
    return 0;
}

static PyObject *scan_summary(PyObject *Py_UNUSED(self), PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    Summary sm;
    memset(&sm, 0, sizeof sm);
    for (int k = 0; k < 3; k++) strings_init(&sm.col[k]);
    sm.metrics_ok = 1;
    int plain;
    Py_BEGIN_ALLOW_THREADS
    plain = each_line(view.buf, (const char *)view.buf + view.len, summary_line_at, &sm);
    for (int k = 0; k < 3; k++)
        if (sm.col[k].chars.n > INT32_MAX) plain = 0;
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    PyObject *out;
    int failed = sm.t_ms.failed | sm.dbl.failed;
    for (int k = 0; k < 3; k++) failed |= sm.col[k].chars.failed | sm.col[k].offsets.failed;
    if (failed) {
        out = PyErr_NoMemory();
    } else if (!plain) {
        out = Py_NewRef(Py_None);
    } else {
        out = Py_BuildValue("{s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:i,s:i}",
                            "op_chars", buf_bytes(&sm.col[0].chars), "op_offsets", buf_bytes(&sm.col[0].offsets),
                            "metric_chars", buf_bytes(&sm.col[1].chars),
                            "metric_offsets", buf_bytes(&sm.col[1].offsets),
                            "value_chars", buf_bytes(&sm.col[2].chars),
                            "value_offsets", buf_bytes(&sm.col[2].offsets),
                            "t_ms", buf_bytes(&sm.t_ms), "dbl", buf_bytes(&sm.dbl),
                            "metrics_ok", sm.metrics_ok, "raw_header", sm.raw);
    }
    for (int k = 0; k < 3; k++) strings_free(&sm.col[k]);
    buf_free(&sm.t_ms);
    buf_free(&sm.dbl);
    return out;
}

/* ------------------------------------------------------------ the module */

static PyMethodDef methods[] = {
    {"scan_status", scan_status, METH_O,
     "scan_status(data) -> dict of packed columns of the status lines and their blocks, "
     "or None when a line is not plain"},
    {"scan_summary", scan_summary, METH_O,
     "scan_summary(data) -> dict of packed columns of the summary lines (op, metric, value "
     "as strings; an all-digit metric as a number), or None when one is not whole"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_linescan", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__linescan(void) {
    init_classes();
    init_keys();
    if (PyType_Ready(&PackedType) < 0) return NULL;
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (!c_locale) return PyErr_NoMemory();
    return PyModule_Create(&module);
}
