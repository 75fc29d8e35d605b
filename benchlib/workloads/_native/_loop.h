/* What every C loop of benchlib shares (_pgloop.c over libpq, _myloop.c over libmariadb,
 * _redisloop.c over hiredis), owned by no workload: the clock, the statuses and the
 * reasons a loop returns, a plan's outcomes (the part of every Plan that records what
 * each operation did, and plan.results that hands them over), the paced loop that runs
 * a plan's operations on one connection (Conn.run), and the module that exports the
 * loop's types and constants to Python (the thin wrappers read them there: no number
 * restated in Python).
 *
 * A loop includes this file after defining LOOP_NAME (its module's name, "_pgloop");
 * its Plan type starts with PLAN_OUTCOMES, so that a Plan * is a PlanHead *.
 */
#ifndef LOOP_H
#define LOOP_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LOOP_PKG "benchlib.workloads._native"
#define LOOP_TYPE(t) LOOP_PKG "." LOOP_NAME "." t

/* an operation's status: benchlib.schema's numbers (tests/test_native_loops.py holds them equal) */
enum { ST_OK = 0, ST_NOT_FOUND = 1, ST_ERROR = 2, ST_EMPTY = 4 };
/* why Conn.run returned (bits): the second ended, the connection is lost, the step's
 * schedule ended; and run_many's further reasons (_muxconn.h): a connection's plan used
 * up, none busy, a second without a completion */
enum { F_TICK = 1, F_BROKEN = 2, F_END = 4, F_NEED = 8, F_IDLE = 16, F_WAIT = 32 };

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

/* ------------------------------------------------------------------ a plan's outcomes */

/* per operation: its code, status (int8), service time and time since its intended
 * start (int64 ns, -1 unpaced), and where the loop times a compound operation's inner
 * statements (in1, in2; NULL where it has none) their latencies */
#define PLAN_OUTCOMES \
    Py_ssize_t n;     \
    int8_t *codes, *st; \
    int64_t *lat, *itd, *in1, *in2;

typedef struct {
    PyObject_HEAD
    PLAN_OUTCOMES
} PlanHead;

/* the outcome arrays of n operations (inner: with in1 and in2); 0, or -1 out of memory */
static int outcomes_alloc(PlanHead *p, Py_ssize_t n, int inner) {
    p->n = n;
    p->codes = calloc(n + 1, 1);
    p->st = calloc(n + 1, 1);
    p->lat = calloc(n + 1, 8);
    p->itd = calloc(n + 1, 8);
    if (inner) {
        p->in1 = calloc(n + 1, 8);
        p->in2 = calloc(n + 1, 8);
    }
    return p->codes && p->st && p->lat && p->itd && (!inner || (p->in1 && p->in2)) ? 0 : -1;
}

static void outcomes_free(PlanHead *p) {
    free(p->codes), free(p->st), free(p->lat), free(p->itd), free(p->in1), free(p->in2);
}

/* exc("<what>: <the client library's message, first line only>") (PyErr_Format has
 * no "%.*s"): the SQL loops' errors of connecting and preparing */
static __attribute__((unused)) void error_line(PyObject *exc, const char *what, const char *m) {
    PyObject *line = PyUnicode_DecodeUTF8(m, (Py_ssize_t)strcspn(m, "\n"), "replace");
    if (line) PyErr_Format(exc, "%s: %U", what, line);
    Py_XDECREF(line);
}

/* a plan method's (a, b): 0 where 0 <= a <= b <= n, else -1 with the error set */
static int range_args(PyObject *args, Py_ssize_t n, Py_ssize_t *a, Py_ssize_t *b) {
    if (!PyArg_ParseTuple(args, "nn", a, b)) return -1;
    if (*a < 0 || *b > n || *a > *b) {
        PyErr_SetString(PyExc_IndexError, "out of range");
        return -1;
    }
    return 0;
}

/* plan.results(a, b): the outcomes of operations a..b-1 as bytes of packed arrays:
 * codes (int8), statuses (int8), latency, intended latency, the inner statements' (int64
 * ns; -1: not recorded; empty where the loop has no compound operation) */
static PyObject *plan_results(PlanHead *p, PyObject *args) {
    Py_ssize_t a, b;
    if (range_args(args, p->n, &a, &b)) return NULL;
    Py_ssize_t k = b - a, ki = p->in1 ? k * 8 : 0;
    return Py_BuildValue("y#y#y#y#y#y#", (char *)(p->codes + a), k, (char *)(p->st + a), k,
                         (char *)(p->lat + a), k * 8, (char *)(p->itd + a), k * 8,
                         p->in1 ? (char *)(p->in1 + a) : "", ki, p->in2 ? (char *)(p->in2 + a) : "", ki);
}

static Py_ssize_t plan_len(PlanHead *p) { return p->n; }

#define PLAN_RESULTS_METHOD \
    {"results", (PyCFunction)plan_results, METH_VARARGS, "outcomes of operations a..b-1, packed"}
static PyMethodDef plan_methods[] __attribute__((unused)) = {PLAN_RESULTS_METHOD, {NULL}};
static PySequenceMethods plan_seq = {.sq_length = (lenfunc)plan_len};

/* a loop's Plan type: its struct, its doc, its constructor and destructor (and its
 * methods, where it has more than plan_methods: PLAN_TYPE_WITH) */
#define PLAN_TYPE_WITH(T, doc_, new_, dealloc_, methods_)                                   \
    {PyVarObject_HEAD_INIT(NULL, 0).tp_name = LOOP_TYPE("Plan"), .tp_basicsize = sizeof(T), \
     .tp_flags = Py_TPFLAGS_DEFAULT, .tp_doc = doc_, .tp_new = new_,                       \
     .tp_dealloc = (destructor)dealloc_, .tp_methods = methods_, .tp_as_sequence = &plan_seq}
#define PLAN_TYPE(T, doc_, new_, dealloc_) PLAN_TYPE_WITH(T, doc_, new_, dealloc_, plan_methods)

/* a loop's Conn type: its struct, doc, constructor, destructor, methods and attributes */
#define CONN_TYPE(T, doc_, new_, dealloc_, methods_, getset_)                               \
    {PyVarObject_HEAD_INIT(NULL, 0).tp_name = LOOP_TYPE("Conn"), .tp_basicsize = sizeof(T), \
     .tp_flags = Py_TPFLAGS_DEFAULT, .tp_doc = doc_, .tp_new = new_,                       \
     .tp_dealloc = (destructor)dealloc_, .tp_methods = methods_, .tp_getset = getset_}

/* ------------------------------------------------------------------ the paced loop */

/* one operation of the plan on the connection, synchronously: its status (a compound
 * one's inner latencies into in1/in2); whether the connection is lost */
typedef int (*op_fn)(void *conn, PlanHead *p, Py_ssize_t i);
typedef int (*bad_fn)(void *conn);

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
static Py_ssize_t run_paced(void *c, op_fn run_op, bad_fn bad, PlanHead *p, Py_ssize_t i, run_args a,
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
        int st = run_op(c, p, i);
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
static int parse_run(PyObject *args, PyTypeObject *plan_type, PlanHead **p, Py_ssize_t *i, run_args *a) {
    if (!PyArg_ParseTuple(args, "O!nLLLLdL", plan_type, p, i, &a->next_tick, &a->end, &a->start,
                          &a->offset, &a->period, &a->issued))
        return -1;
    if (*i < 0 || *i > (*p)->n) {
        PyErr_SetString(PyExc_IndexError, "operation index out of range");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ the module */

/* a loop's module: its Plan and Conn types; its constants (the statuses, the reasons it
 * returns: F_*, ST_*) and KINDS, the operations its plans know by name, in code order
 * (names: NULL-terminated) */
static PyObject *loop_module(struct PyModuleDef *def, PyTypeObject *plan_type, PyTypeObject *conn_type,
                             const char *const *names) {
    static const struct { const char *name; int value; } consts[] = {
        {"ST_OK", ST_OK}, {"ST_NOT_FOUND", ST_NOT_FOUND}, {"ST_ERROR", ST_ERROR}, {"ST_EMPTY", ST_EMPTY},
        {"F_TICK", F_TICK}, {"F_BROKEN", F_BROKEN}, {"F_END", F_END},
        {"F_NEED", F_NEED}, {"F_IDLE", F_IDLE}, {"F_WAIT", F_WAIT}};
    if (PyType_Ready(plan_type) < 0 || PyType_Ready(conn_type) < 0) return NULL;
    PyObject *m = PyModule_Create(def), *kinds = PyDict_New();
    if (!m || !kinds) goto fail;
    for (size_t j = 0; j < sizeof consts / sizeof consts[0]; j++)
        if (PyModule_AddIntConstant(m, consts[j].name, consts[j].value) < 0) goto fail;
    for (int k = 0; names[k]; k++) {
        PyObject *v = PyLong_FromLong(k);
        if (!v || PyDict_SetItemString(kinds, names[k], v) < 0) {
            Py_XDECREF(v);
            goto fail;
        }
        Py_DECREF(v);
    }
    Py_INCREF(plan_type);
    Py_INCREF(conn_type);
    if (PyModule_AddObject(m, "Plan", (PyObject *)plan_type) < 0
        || PyModule_AddObject(m, "Conn", (PyObject *)conn_type) < 0
        || PyModule_AddObject(m, "KINDS", kinds) < 0)
        goto fail;
    return m;
fail:
    Py_XDECREF(kinds);
    Py_XDECREF(m);
    return NULL;
}

#endif
