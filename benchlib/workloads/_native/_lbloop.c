/* LinkBench's ten request operations on PostgreSQL, a chunk at a time, in C over libpq
 * (benchlib/workloads/linkbench/bindings/postgres_native.py hands the chunks over).
 *
 * The Python path (requests.py over psycopg) pays ~100 µs of client CPU per request,
 * most of it in psycopg's layers (prepare handling, argument conversion, its
 * generators, fetch). Here a chunk of requests (the codes and argument tuples that
 * RequestClient.next_chunk draws) is parsed once into a Plan and run by _loop.h's paced
 * loop without the GIL, each request as LinkStorePgsql sends it and requests.py does:
 *   reads and node writes: one prepared statement each, autocommit;
 *   link writes: BEGIN pipelined with the transaction's first statement (one round trip,
 *   as pgjdbc and PgDb send them), then its statements and COMMIT, ROLLBACK where the
 *   Python path rolls back; ADD_LINK inserting first, UPDATE_LINK locking first, each
 *   becoming the other when the first finds it needed (RETRY, at most 4 switches);
 *   a duplicate key (SQLSTATE 23505) is the one error that switches, any other ERROR.
 * Statuses as requests.py returns them (OK, RETRY, EMPTY, ERROR), with per request the
 * rows a MULTIGET_LINK or GET_LINKS_LIST returned, a full list's last link time (the
 * list-tail history, kept in Python) and the request's end time (RequesterStats).
 *
 * Statements: conn.prepare(list of 12, range_limit) in the order of STMT below (on
 * both connections), conn.prepare_multiget(n, sql) for each IN-list length.
 */
#define LOOP_NAME "_lbloop"
#include "_loop.h"

#include <libpq-fe.h>

#include "_lbplan.h"

/* ------------------------------------------------------------------ Conn */

typedef struct {
    PyObject_HEAD
    PGconn *pg, *w;                  /* reads and node writes (autocommit); link writes */
    int ready;
    char limit[24];                  /* range_limit, as text */
    uint8_t multi[MAX_MULTI + 1];    /* the IN-list lengths prepared */
} Conn;

static void db_close(Conn *c) {
    PGconn *pg = c->pg, *w = c->w;
    c->pg = c->w = NULL;
    Py_BEGIN_ALLOW_THREADS
    if (pg) PQfinish(pg);
    if (w) PQfinish(w);
    Py_END_ALLOW_THREADS
}

static void conn_dealloc(Conn *c) {
    db_close(c);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyObject *conn_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    const char *info;
    if (!PyArg_ParseTuple(args, "s", &info)) return NULL;
    Conn *c = (Conn *)type->tp_alloc(type, 0);
    if (!c) return NULL;
    PGconn *pg, *w;
    Py_BEGIN_ALLOW_THREADS
    pg = PQconnectdb(info);
    w = pg && PQstatus(pg) == CONNECTION_OK ? PQconnectdb(info) : NULL;
    Py_END_ALLOW_THREADS
    c->pg = pg, c->w = w;
    PGconn *bad = !pg || PQstatus(pg) != CONNECTION_OK ? pg : w;
    if (!bad || PQstatus(bad) != CONNECTION_OK) {
        error_line(PyExc_ConnectionError, "cannot connect", bad ? PQerrorMessage(bad) : "out of memory");
        Py_DECREF(c);
        return NULL;
    }
    return (PyObject *)c;
}

static int prepare_one(PGconn *pg, const char *name, PyObject *sql) {
    if (!PyBytes_Check(sql)) {
        PyErr_SetString(PyExc_TypeError, "statements must be bytes");
        return -1;
    }
    if (!pg) {
        PyErr_SetString(PyExc_ConnectionError, "closed");
        return -1;
    }
    PGresult *r;
    Py_BEGIN_ALLOW_THREADS
    r = PQprepare(pg, name, PyBytes_AS_STRING(sql), 0, NULL);
    Py_END_ALLOW_THREADS
    int ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
    /* a connection the server ended (between two chunks, say: the next plan prepares its
     * MULTIGET_LINK statements) is a lost one for the reconnection policy, not a bad statement */
    if (!ok) error_line(PQstatus(pg) == CONNECTION_BAD ? PyExc_ConnectionError : PyExc_ValueError, name,
                        r ? PQresultErrorMessage(r) : PQerrorMessage(pg));
    PQclear(r);
    return ok ? 0 : -1;
}

/* conn.prepare(statements, range_limit): the 12 statements of the STMT order */
static PyObject *conn_prepare(Conn *c, PyObject *args) {
    PyObject *list;
    long long limit;
    if (!PyArg_ParseTuple(args, "O!L", &PyList_Type, &list, &limit)) return NULL;
    if (PyList_GET_SIZE(list) != NSTMT) {
        PyErr_Format(PyExc_ValueError, "%d statements expected", NSTMT);
        return NULL;
    }
    for (int j = 0; j < NSTMT; j++) {
        char name[8];
        snprintf(name, sizeof name, "l%d", j);
        if (prepare_one(c->pg, name, PyList_GET_ITEM(list, j)) || prepare_one(c->w, name, PyList_GET_ITEM(list, j)))
            return NULL;
    }
    snprintf(c->limit, sizeof c->limit, "%lld", limit);
    c->ready = 1;
    Py_RETURN_NONE;
}

/* conn.prepare_multiget(n, sql): MULTIGET_LINK's statement for n id2s, once */
static PyObject *conn_prepare_multiget(Conn *c, PyObject *args) {
    int n;
    PyObject *sql;
    if (!PyArg_ParseTuple(args, "iO", &n, &sql)) return NULL;
    if (n < 1 || n > MAX_MULTI) return PyErr_Format(PyExc_ValueError, "1 to %d id2s", MAX_MULTI);
    if (!c->multi[n]) {
        char name[16];
        snprintf(name, sizeof name, "m%d", n);
        if (prepare_one(c->pg, name, sql)) return NULL;
        c->multi[n] = 1;
    }
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ _lbops.h's calls on libpq:
 * numbers as text parameters, payloads as binary bytea */

typedef PGresult *res_t;

static const char *const stmt_names[NSTMT] = {"l0", "l1", "l2", "l3", "l4", "l5",
                                              "l6", "l7", "l8", "l9", "l10", "l11"};

static PGconn *pick(Conn *c, int w) { return w ? c->w : c->pg; }

static int db_ok(res_t r) {
    ExecStatusType s = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    return s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK;
}

/* r, its failure's message noted (_lbplan.h's note_error): the primary message, as
 * psycopg's str(e) begins; the connection's where no result came */
static res_t noted(PGconn *pg, res_t r) {
    if (db_ok(r)) return r;
    const char *m = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    if (!m || !*m) m = r ? PQresultErrorMessage(r) : NULL;
    if (!m || !*m) m = pg ? PQerrorMessage(pg) : "connection closed";
    note_error(m);
    return r;
}

static res_t db_ex(Conn *c, int w, int s, const params_t *q) {
    PGconn *pg = pick(c, w);
    return noted(pg, pg ? PQexecPrepared(pg, stmt_names[s], q->n, q->v, q->len, q->fmt, 0) : NULL);
}

static int db_dup(res_t r) {
    const char *s = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    return s && strcmp(s, "23505") == 0;
}

static int db_matched(res_t r) {   /* an UPDATE or DELETE matched rows */
    const char *t = PQcmdTuples(r);
    return t[0] && strcmp(t, "0") != 0;
}

static int db_nrows(res_t r) { return PQntuples(r); }
static const char *db_value(res_t r, int row, int col) { return PQgetvalue(r, row, col); }
static void db_clear(res_t r) { PQclear(r); }

static int simple(PGconn *pg, const char *sql) {   /* COMMIT, ROLLBACK: 1 when done */
    if (!pg) return 0;
    PGresult *r = noted(pg, PQexec(pg, sql));
    int done = db_ok(r);
    PQclear(r);
    return done;
}

static int db_commit(Conn *c) { return simple(c->w, "COMMIT"); }

static void db_rollback(Conn *c) {
    if (c->w && PQtransactionStatus(c->w) != PQTRANS_IDLE) simple(c->w, "ROLLBACK");
}

/* BEGIN and the transaction's first statement in one pipeline (one round trip): the
 * statement's result (NULL: none came) */
static res_t db_begin_with(Conn *c, int s, const params_t *q) {
    PGconn *pg = c->w;
    if (!pg || !PQenterPipelineMode(pg)) return NULL;
    PGresult *res = NULL, *r;
    if (PQsendQueryParams(pg, "BEGIN", 0, NULL, NULL, NULL, NULL, 0)
        && PQsendQueryPrepared(pg, stmt_names[s], q->n, q->v, q->len, q->fmt, 0) && PQpipelineSync(pg)) {
        int query = 0, nulls = 0;   /* results: BEGIN's, NULL, the statement's, NULL, the sync */
        for (;;) {
            if (!(r = PQgetResult(pg))) {
                if (++nulls > 2 || PQstatus(pg) != CONNECTION_OK) break;
                query++;
                continue;
            }
            nulls = 0;
            if (PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
                PQclear(r);
                break;
            }
            if (query == 1 && !res) res = r;
            else PQclear(r);
        }
    }
    PQexitPipelineMode(pg);
    return noted(pg, res);
}

/* MULTIGET_LINK: statement "m<n>", id1, link_type and the n id2s as text */
static res_t db_multiget(Conn *c, const lop_t *op, const int64_t *ids) {
    char name[16];
    snprintf(name, sizeof name, "m%d", op->nm);
    char (*txt)[24] = malloc((size_t)(op->nm + 2) * 24);
    const char **v = malloc((size_t)(op->nm + 2) * sizeof *v);
    PGresult *r = NULL;
    if (txt && v && c->pg) {
        for (int j = 0; j < op->nm + 2; j++) {
            snprintf(txt[j], 24, "%lld", (long long)(j == 0 ? op->a : j == 1 ? op->t : ids[j - 2]));
            v[j] = txt[j];
        }
        r = PQexecPrepared(c->pg, name, op->nm + 2, v, NULL, NULL, 0);
    }
    free(txt), free(v);
    return noted(c->pg, r);
}

static int db_lost(Conn *c) {   /* either connection */
    return !c->pg || !c->w || PQstatus(c->pg) != CONNECTION_OK || PQstatus(c->w) != CONNECTION_OK;
}

#include "_lbops.h"   /* the requests themselves: lb_op, conn.run */

static PyObject *conn_get_closed(Conn *c, void *unused) { return PyBool_FromLong(conn_lost(c)); }

static PyObject *conn_get_backend_pid(Conn *c, void *unused) {
    return PyLong_FromLong(c->pg ? PQbackendPID(c->pg) : 0);
}

static PyGetSetDef conn_getset[] = {
    {"backend_pid", (getter)conn_get_backend_pid, NULL, "the server process", NULL},
    {"closed", (getter)conn_get_closed, NULL, "True when the connection is gone", NULL},
    {NULL}};

LB_MODULE(PyInit__lbloop, "a libpq connection with LinkBench's statements prepared", conn_getset)
