/* What the C loops over a database's client library share (_pgloop.c over libpq,
 * _myloop.c over libmariadb): a Plan — a chunk of YCSB operations parsed once from the
 * workload's codes and argument tuples, with room for their outcomes — and the
 * synchronous loop that runs a plan's operations on one connection, paced or not,
 * until the chunk ends, a second ends, the schedule passes the step's end or the
 * connection is lost. A loop includes this file after defining PLAN_TYPE_NAME and
 * gives run_plan its own statement executor.
 *
 * Beside YCSB's kinds, K_COUNT: a statement over a range of keys whose result's first
 * column counts the rows it touched (ybio's read and update, run by the same loop over
 * libpq), OK when that is the count planned, else NOT_FOUND.
 *
 * What is recorded per operation is what the Python path records: the service time
 * (ns, from just before the statement is sent to its result), the time since its
 * intended start when paced, the status (0 OK, 1 NOT_FOUND, 2 ERROR), and for a
 * read-modify-write the latencies of its read and its update. Clocks are
 * CLOCK_MONOTONIC, Python's perf_counter_ns.
 */
#ifndef YCSBPLAN_H
#define YCSBPLAN_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { K_READ, K_UPDATE, K_INSERT, K_SCAN, K_RMW, K_COUNT, NKINDS };
enum { ST_OK = 0, ST_NOT_FOUND = 1, ST_ERROR = 2 };
/* why Conn.run returned (bits) */
enum { F_TICK = 1, F_BROKEN = 2, F_END = 4 };

static inline int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_until(int64_t t) {
    struct timespec ts = {(time_t)(t / 1000000000LL), (long)(t % 1000000000LL)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
    }
}

/* ------------------------------------------------------------------ Plan */

typedef struct {
    int8_t kind;
    int32_t f1, f2;    /* statement index: field + 1 (0 = all fields) for read/scan, update */
    int32_t p;         /* first parameter in Plan.params */
    int16_t np1, np2;  /* parameters of the (first, second) statement */
    int64_t want;      /* K_COUNT: the rows its statement must count */
} op_t;

typedef struct {
    PyObject_HEAD
    Py_ssize_t n;
    int nf;               /* the table's fields: what the statements take */
    op_t *ops;
    const char **params;  /* pointers into the bytes objects of `keep` (NUL-terminated) */
    char (*nums)[24];     /* numbers as text, two slots per operation (scan length; range) */
    int8_t *codes, *st;
    int64_t *lat, *itd, *in1, *in2;
    PyObject *keep;       /* the argument list: its bytes stay alive while the plan does */
} Plan;

static void plan_dealloc(Plan *p) {
    free(p->ops);
    free(p->params);
    free(p->nums);
    free(p->codes);
    free(p->st);
    free(p->lat);
    free(p->itd);
    free(p->in1);
    free(p->in2);
    Py_XDECREF(p->keep);
    Py_TYPE(p)->tp_free((PyObject *)p);
}

static const char *bytes_arg(PyObject *o) {
    if (!PyBytes_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "keys and values must be bytes");
        return NULL;
    }
    return PyBytes_AS_STRING(o);  /* always NUL-terminated */
}

/* the values of an update or insert: a list or tuple of bytes; their count must be
 * what the statement takes (all fields, or one) */
static int put_values(PyObject *vals, Py_ssize_t want, const char **dst) {
    PyObject *seq = PySequence_Fast(vals, "values must be a sequence");
    if (!seq) return -1;
    Py_ssize_t k = PySequence_Fast_GET_SIZE(seq);
    if (k != want) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "%zd values where the statement takes %zd", k, want);
        return -1;
    }
    for (Py_ssize_t j = 0; j < k; j++)
        if (!(dst[j] = bytes_arg(PySequence_Fast_GET_ITEM(seq, j)))) {
            Py_DECREF(seq);
            return -1;
        }
    Py_DECREF(seq);
    return 0;
}

static int check_field(long f, int nf) {
    if (f < -1 || f >= nf) {
        PyErr_Format(PyExc_ValueError, "field %ld out of range (-1 .. %d)", f, nf - 1);
        return -1;
    }
    return 0;
}

/* a K_COUNT operation: (statement, lo, hi, rows), the range's ends as its parameters */
static int parse_count(Plan *p, Py_ssize_t i, PyObject *a, Py_ssize_t *np) {
    op_t *op = &p->ops[i];
    long long v[4];
    for (int j = 0; j < 4; j++)
        if ((v[j] = PyLong_AsLongLong(PyTuple_GET_ITEM(a, j))) == -1 && PyErr_Occurred()) return -1;
    if (v[0] < 0 || v[0] > 15) {
        PyErr_Format(PyExc_ValueError, "operation %zd: statement %lld out of range", i, v[0]);
        return -1;
    }
    const char **pa = p->params + *np;
    for (int j = 0; j < 2; j++) {
        snprintf(p->nums[2 * i + j], sizeof p->nums[0], "%lld", v[1 + j]);
        pa[j] = p->nums[2 * i + j];
    }
    op->kind = K_COUNT;
    op->p = (int32_t)*np;
    op->f1 = (int32_t)v[0];
    op->np1 = 2;
    op->want = v[3];
    *np += 2;
    return 0;
}

/* one operation's arguments, in the binding's shapes:
 *   read (key, field)  scan (key, count, field)  update (key, field, values)
 *   insert (key, values)  read-modify-write (key, read_field, write_field, values)
 *   count (statement, lo, hi, rows): K_COUNT, numbers
 * and its parameters, in statement order, from params[op.p]:
 *   read [key]  scan [key, count]  update [values…, key]  insert [key, values…]
 *   read-modify-write [key, values…, key]: the read takes the first, the update the rest */
static int parse_op(Plan *p, Py_ssize_t i, int kind, PyObject *a, int nf, Py_ssize_t *np) {
    static const Py_ssize_t want[NKINDS] = {2, 3, 2, 3, 4, 4};
    op_t *op = &p->ops[i];
    const char **pa = p->params + *np;
    if (!PyTuple_Check(a) || PyTuple_GET_SIZE(a) != want[kind]) {
        PyErr_Format(PyExc_ValueError, "operation %zd: a tuple of %zd arguments expected", i, want[kind]);
        return -1;
    }
    if (kind == K_COUNT) return parse_count(p, i, a, np);
    const char *key = bytes_arg(PyTuple_GET_ITEM(a, 0));
    if (!key) return -1;
    long f = 0, f2 = 0;
    Py_ssize_t nv;
    op->kind = (int8_t)kind;
    op->p = (int32_t)*np;
    switch (kind) {
    case K_READ:
        f = PyLong_AsLong(PyTuple_GET_ITEM(a, 1));
        pa[0] = key;
        op->np1 = 1;
        break;
    case K_SCAN:
        f = PyLong_AsLong(PyTuple_GET_ITEM(a, 2));
        snprintf(p->nums[2 * i], sizeof p->nums[0], "%ld", PyLong_AsLong(PyTuple_GET_ITEM(a, 1)));
        pa[0] = key;
        pa[1] = p->nums[2 * i];
        op->np1 = 2;
        break;
    case K_UPDATE:
        f = PyLong_AsLong(PyTuple_GET_ITEM(a, 1));
        if (PyErr_Occurred() || check_field(f, nf)) return -1;
        nv = f < 0 ? nf : 1;
        if (put_values(PyTuple_GET_ITEM(a, 2), nv, pa)) return -1;
        pa[nv] = key;
        op->np1 = (int16_t)(nv + 1);
        break;
    case K_INSERT:
        pa[0] = key;
        if (put_values(PyTuple_GET_ITEM(a, 1), nf, pa + 1)) return -1;
        op->np1 = (int16_t)(nf + 1);
        break;
    default:  /* K_RMW */
        f = PyLong_AsLong(PyTuple_GET_ITEM(a, 1));
        f2 = PyLong_AsLong(PyTuple_GET_ITEM(a, 2));
        if (PyErr_Occurred() || check_field(f2, nf)) return -1;
        nv = f2 < 0 ? nf : 1;
        pa[0] = key;
        if (put_values(PyTuple_GET_ITEM(a, 3), nv, pa + 1)) return -1;
        pa[nv + 1] = key;
        op->np1 = 1;
        op->np2 = (int16_t)(nv + 1);
        break;
    }
    if (PyErr_Occurred() || check_field(f, nf)) return -1;
    op->f1 = (int32_t)(f + 1);
    op->f2 = (int32_t)(f2 + 1);
    *np += op->np1 + op->np2;
    return 0;
}

/* Plan(codes, args, kinds, nfields): kinds maps a workload code to the kind of
 * operation (0 read, 1 update, 2 insert, 3 scan, 4 read-modify-write, 5 count) */
static PyObject *plan_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    PyObject *codes, *argl;
    Py_buffer kinds;
    int nf;
    if (!PyArg_ParseTuple(args, "OOy*i", &codes, &argl, &kinds, &nf)) return NULL;
    PyObject *cs = PySequence_Fast(codes, "codes must be a sequence");
    PyObject *as = cs ? PySequence_Fast(argl, "args must be a sequence") : NULL;
    Plan *p = as ? (Plan *)type->tp_alloc(type, 0) : NULL;
    if (!p) goto fail;
    Py_ssize_t n = p->n = PySequence_Fast_GET_SIZE(cs);
    p->nf = nf;
    if (PySequence_Fast_GET_SIZE(as) != n) {
        PyErr_SetString(PyExc_ValueError, "codes and args differ in length");
        goto fail;
    }
    size_t per = (size_t)nf + 3;  /* the most parameters one operation takes */
    p->ops = calloc(n + 1, sizeof *p->ops);
    p->params = calloc(n * per + 1, sizeof *p->params);
    p->nums = calloc(2 * n + 1, sizeof *p->nums);
    p->codes = calloc(n + 1, 1);
    p->st = calloc(n + 1, 1);
    p->lat = calloc(n + 1, 8);
    p->itd = calloc(n + 1, 8);
    p->in1 = calloc(n + 1, 8);
    p->in2 = calloc(n + 1, 8);
    if (!p->ops || !p->params || !p->nums || !p->codes || !p->st || !p->lat || !p->itd
        || !p->in1 || !p->in2) {
        PyErr_NoMemory();
        goto fail;
    }
    Py_ssize_t np = 0;
    const uint8_t *km = kinds.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        long c = PyLong_AsLong(PySequence_Fast_GET_ITEM(cs, i));
        if (c < 0 || c >= kinds.len || km[c] >= NKINDS) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "operation code %ld has no kind", c);
            goto fail;
        }
        p->codes[i] = (int8_t)c;
        if (parse_op(p, i, km[c], PySequence_Fast_GET_ITEM(as, i), nf, &np)) goto fail;
    }
    p->keep = as;
    Py_DECREF(cs);
    PyBuffer_Release(&kinds);
    return (PyObject *)p;
fail:
    Py_XDECREF(cs);
    Py_XDECREF(as);
    Py_XDECREF(p);
    PyBuffer_Release(&kinds);
    return NULL;
}

/* plan.results(a, b): the outcomes of operations a..b-1 as bytes of packed arrays:
 * codes (int8), statuses (int8), latency, intended latency, the read and the update
 * of a read-modify-write (int64 ns; -1: not recorded) */
static PyObject *plan_results(Plan *p, PyObject *args) {
    Py_ssize_t a, b;
    if (!PyArg_ParseTuple(args, "nn", &a, &b)) return NULL;
    if (a < 0 || b > p->n || a > b) {
        PyErr_SetString(PyExc_IndexError, "results out of range");
        return NULL;
    }
    Py_ssize_t k = b - a;
    return Py_BuildValue("y#y#y#y#y#y#", (char *)(p->codes + a), k, (char *)(p->st + a), k,
                         (char *)(p->lat + a), k * 8, (char *)(p->itd + a), k * 8,
                         (char *)(p->in1 + a), k * 8, (char *)(p->in2 + a), k * 8);
}

static Py_ssize_t plan_len(Plan *p) { return p->n; }

static PyMethodDef plan_methods[] = {
    {"results", (PyCFunction)plan_results, METH_VARARGS, "outcomes of operations a..b-1, packed"},
    {NULL}};
static PySequenceMethods plan_seq = {.sq_length = (lenfunc)plan_len};

static PyTypeObject PlanType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = PLAN_TYPE_NAME,
    .tp_basicsize = sizeof(Plan),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "a chunk of YCSB operations parsed for the C loop",
    .tp_new = plan_new,
    .tp_dealloc = (destructor)plan_dealloc,
    .tp_methods = plan_methods,
    .tp_as_sequence = &plan_seq,
};

/* operation i of the plan about to be sent (by run_many): its inner latencies not yet taken */
static inline const op_t *plan_begin(Plan *p, Py_ssize_t i) {
    p->in1[i] = p->in2[i] = -1;
    return &p->ops[i];
}

/* ------------------------------------------------------------------ the loop */

/* a statement on a connection: its status (want: the rows a K_COUNT must count); and
 * whether the connection is lost */
typedef int (*exec_fn)(void *conn, int kind, int idx, int np, const char *const *vals, int64_t want);
typedef int (*bad_fn)(void *conn);

/* one operation of the plan, synchronously; the read and update of a
 * read-modify-write are timed into in1/in2 */
static int run_op(void *c, exec_fn ex, bad_fn bad, Plan *p, Py_ssize_t i) {
    const op_t *op = &p->ops[i];
    const char *const *pa = p->params + op->p;
    if (op->kind != K_RMW) {
        p->in1[i] = p->in2[i] = -1;
        return ex(c, op->kind, op->f1, op->np1, pa, op->want);
    }
    int64_t t0 = now_ns();
    int s1 = ex(c, K_READ, op->f1, op->np1, pa, 0);
    int64_t tm = now_ns();
    if (s1 == ST_ERROR && bad(c)) {  /* no update on a lost connection */
        p->in1[i] = p->in2[i] = -1;
        return s1;
    }
    int s2 = ex(c, K_UPDATE, op->f2, op->np2, pa + 1, 0);
    p->in1[i] = tm - t0;
    p->in2[i] = now_ns() - tm;
    return s1 ? s1 : s2;
}

typedef struct {
    long long next_tick, end, start, offset, issued;
    double period;
} run_args;

/* Operations i, i+1 … of the plan, until the plan ends, one completes at or after
 * next_tick (F_TICK: it is the last one done), one fails on a lost connection
 * (F_BROKEN) or, paced (period > 0: operation k's intended start is start + offset
 * + k × period, k counted from `issued`), the next one's intended start is at or
 * past `end` (F_END: not issued). end = 0: no end. Called without the GIL; returns
 * the next operation's index, the last completion's time in *t1 and why in *flags. */
static Py_ssize_t run_plan(void *c, exec_fn ex, bad_fn bad, Plan *p, Py_ssize_t i, run_args a,
                           int64_t *t1, int *flags) {
    *flags = 0;
    *t1 = 0;
    for (; i < p->n && !*flags; i++) {
        int64_t intended = 0;
        if (a.period > 0) {
            intended = a.start + a.offset + (int64_t)((double)a.issued * a.period);
            if (a.end && intended >= a.end) {
                *flags = F_END;
                break;
            }
            if (now_ns() < intended) sleep_until(intended);
        }
        int64_t t0 = now_ns();
        int st = run_op(c, ex, bad, p, i);
        *t1 = now_ns();
        p->lat[i] = *t1 - t0;
        p->itd[i] = a.period > 0 ? *t1 - intended : -1;
        p->st[i] = (int8_t)st;
        a.issued++;
        if (st == ST_ERROR && bad(c)) *flags |= F_BROKEN;
        if (*t1 >= a.next_tick) *flags |= F_TICK;
    }
    return i;
}

/* conn.run's arguments: (plan, i, next_tick, end, start, offset, period, issued) */
static int parse_run(PyObject *args, Plan **p, Py_ssize_t *i, run_args *a) {
    if (!PyArg_ParseTuple(args, "O!nLLLLdL", &PlanType, p, i, &a->next_tick, &a->end, &a->start,
                          &a->offset, &a->period, &a->issued))
        return -1;
    if (*i < 0 || *i > (*p)->n) {
        PyErr_SetString(PyExc_IndexError, "operation index out of range");
        return -1;
    }
    return 0;
}

/* a loop's module: its Plan and Conn types */
static PyObject *loop_module(struct PyModuleDef *def, PyTypeObject *conn_type) {
    if (PyType_Ready(&PlanType) < 0 || PyType_Ready(conn_type) < 0) return NULL;
    PyObject *m = PyModule_Create(def);
    if (!m) return NULL;
    Py_INCREF(&PlanType);
    Py_INCREF(conn_type);
    if (PyModule_AddObject(m, "Plan", (PyObject *)&PlanType) < 0
        || PyModule_AddObject(m, "Conn", (PyObject *)conn_type) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

#endif
