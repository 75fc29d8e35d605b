/* The op plan of the C loops over a SQL database's client library (_pgloop.c over
 * libpq, _myloop.c over libmariadb): a Plan — a chunk of operations parsed once from a
 * workload's codes and argument tuples, with room for their outcomes (_loop.h) — and
 * what one operation is on one connection (sql_op, the step of _loop.h's paced loop).
 * A loop includes this file after _loop.h and defines the two functions it declares:
 * exec_stmt (one statement, its status) and conn_lost.
 *
 * The kinds of operation (KINDS in the module, by these names, in this order):
 *   READ, UPDATE, INSERT, SCAN: a row by key (some fields or all), a range from a key;
 *   READ-MODIFY-WRITE: a read then an update of the same key, each timed on its own;
 *   COUNT: a statement over a range of keys whose result's first column counts the
 *   rows it touched, OK when that is the count planned, else NOT_FOUND.
 * YCSB runs the first five, ybio the last (its read and its update), on the same loop.
 *
 * What is recorded per operation is what the Python path records: the service time
 * (ns, from just before the statement is sent to its result), the time since its
 * intended start when paced, the status (0 OK, 1 NOT_FOUND, 2 ERROR), and for a
 * read-modify-write the latencies of its read and its update. Clocks are
 * CLOCK_MONOTONIC, Python's perf_counter_ns.
 */
#ifndef SQLPLAN_H
#define SQLPLAN_H

#include "_loop.h"

enum { K_READ, K_UPDATE, K_INSERT, K_SCAN, K_RMW, K_COUNT, NKINDS };
static const char *const sql_kinds[NKINDS + 1] = {"READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE",
                                                  "COUNT", NULL};

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
    PLAN_OUTCOMES
    int nf;               /* the table's fields: what the statements take */
    op_t *ops;
    const char **params;  /* pointers into the bytes objects of `keep` (NUL-terminated) */
    char (*nums)[24];     /* numbers as text, two slots per operation (scan length; range) */
    PyObject *keep;       /* the argument list: its bytes stay alive while the plan does */
    char *arena;          /* Plan.columns: the keys and values it wrote (_sqlcols.h), or NULL */
} Plan;

static void plan_dealloc(Plan *p) {
    free(p->ops);
    free(p->params);
    free(p->nums);
    free(p->arena);
    outcomes_free((PlanHead *)p);
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
    Py_ssize_t n = PySequence_Fast_GET_SIZE(cs);
    p->nf = nf;
    if (PySequence_Fast_GET_SIZE(as) != n) {
        PyErr_SetString(PyExc_ValueError, "codes and args differ in length");
        goto fail;
    }
    size_t per = (size_t)nf + 3;  /* the most parameters one operation takes */
    p->ops = calloc(n + 1, sizeof *p->ops);
    p->params = calloc(n * per + 1, sizeof *p->params);
    p->nums = calloc(2 * n + 1, sizeof *p->nums);
    if (outcomes_alloc((PlanHead *)p, n, 1) || !p->ops || !p->params || !p->nums) {
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

#include "_sqlcols.h"   /* Plan.columns: the same plan from a chunk's packed columns */

static PyMethodDef sql_plan_methods[] = {
    PLAN_RESULTS_METHOD,
    {"columns", (PyCFunction)plan_columns, METH_VARARGS | METH_CLASS, "a plan from a chunk's columns"},
    {NULL}};

static PyTypeObject PlanType = PLAN_TYPE_WITH(Plan, "a chunk of operations parsed for the C loop", plan_new,
                                              plan_dealloc, sql_plan_methods);

/* operation i of the plan about to be sent (by run_many): its inner latencies not yet taken */
static inline const op_t *plan_begin(Plan *p, Py_ssize_t i) {
    p->in1[i] = p->in2[i] = -1;
    return &p->ops[i];
}

/* ------------------------------------------------------------------ an operation */

/* a statement on a connection: its status (want: the rows a COUNT must count); whether
 * the connection is lost. The loop that includes this file defines them. */
static int exec_stmt(void *conn, int kind, int idx, int np, const char *const *vals, int64_t want);
static int conn_lost(void *conn);

/* operation i of the plan, synchronously (_loop.h's op_fn); the read and update of a
 * read-modify-write are timed into in1/in2 */
static int sql_op(void *c, PlanHead *ph, Py_ssize_t i) {
    Plan *p = (Plan *)ph;
    const op_t *op = &p->ops[i];
    const char *const *pa = p->params + op->p;
    if (op->kind != K_RMW) {
        p->in1[i] = p->in2[i] = -1;
        return exec_stmt(c, op->kind, op->f1, op->np1, pa, op->want);
    }
    int64_t t0 = now_ns();
    int s1 = exec_stmt(c, K_READ, op->f1, op->np1, pa, 0);
    int64_t tm = now_ns();
    if (s1 == ST_ERROR && conn_lost(c)) {  /* no update on a lost connection */
        p->in1[i] = p->in2[i] = -1;
        return s1;
    }
    int s2 = exec_stmt(c, K_UPDATE, op->f2, op->np2, pa + 1, 0);
    p->in1[i] = tm - t0;
    p->in2[i] = now_ns() - tm;
    return s1 ? s1 : s2;
}

/* conn.run(plan, i, next_tick, end, start, offset, period, issued) -> (i, t1, flags):
 * _loop.h's paced loop of sql_op on connection c (ready: its statements are prepared) */
static PyObject *sql_run(void *c, int ready, PyObject *args) {
    PlanHead *p;
    Py_ssize_t i;
    run_args a;
    if (parse_run(args, &PlanType, &p, &i, &a)) return NULL;
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "statements not prepared");
        return NULL;
    }
    int flags;
    int64_t t1;
    Py_BEGIN_ALLOW_THREADS
    i = run_paced(c, sql_op, conn_lost, p, i, a, &t1, &flags);
    Py_END_ALLOW_THREADS
    return Py_BuildValue("nLi", i, (long long)t1, flags);
}

#endif
