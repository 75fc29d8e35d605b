/* LinkBench's ten request operations on MariaDB/MySQL, a chunk at a time, in C over
 * libmariadb (benchlib/workloads/linkbench/bindings/mysql_native.py hands the chunks over).
 *
 * The twin of _lbloop.c (libpq): the same Plan (_lbplan.h) and the same requests
 * (_lbops.h's lb_op, the link writes' insert ⇄ update switches and their statuses), here
 * over the calls below, each statement sent as the Python path (bindings/mysql.py over
 * mysqlclient or PyMySQL) sends it: its text with the values in place (numbers as text,
 * payloads as hex literals X'…', which no character set or SQL mode reads otherwise),
 * results fetched whole (mysql_store_result). Two connections per requester, as
 * LinkStoreMysql opens them: reads and node writes in autocommit; link writes with
 * autocommit off, the server opening a transaction with its first statement (no BEGIN
 * sent, as Connector/J), then COMMIT or ROLLBACK. Both connect with CLIENT_FOUND_ROWS, so
 * that an UPDATE's affected rows are the rows it matched (the Python path reads them from
 * the server's "Rows matched" info: MySqlDialect.rows_matched); a duplicate key is
 * ER_DUP_ENTRY (1062), the one error that switches an insert to an update.
 *
 * Statements: conn.prepare(list of 12, range_limit) in _lbplan.h's STMT order with %s
 * placeholders (kept as templates: nothing is prepared on the server, so a reopened
 * connection has nothing to redo but these), conn.prepare_multiget(n, sql) for each
 * IN-list length.
 */
#define LOOP_NAME "_lbmyloop"
#include "_loop.h"

#include <errmsg.h>
#include <mysql.h>

#include "_lbplan.h"
#include "_mytmpl.h"

#ifndef ER_DUP_ENTRY
#define ER_DUP_ENTRY 1062
#endif
#ifndef ER_CONNECTION_KILLED
#define ER_CONNECTION_KILLED 1927
#endif

/* ------------------------------------------------------------------ Conn */

typedef struct {              /* a statement's outcome */
    int ok;
    unsigned err;             /* mysql_errno where it failed */
    my_ulonglong affected;
    MYSQL_RES *res;           /* a SELECT's rows */
} myres_t;

typedef struct {
    PyObject_HEAD
    MYSQL *m, *w;                    /* reads and node writes (autocommit); link writes */
    int ready, gone;                 /* gone: -1 not known since the last error; 0/1 */
    char limit[24];                  /* range_limit, as text */
    uint8_t multi[MAX_MULTI + 1];    /* the IN-list lengths prepared */
    tmpl_t t[NSTMT], *mt;            /* the statements; MULTIGET_LINK's by IN-list length */
    char *q;                         /* the statement being sent */
    size_t cap;
    myres_t r;                       /* the outcome in hand (one at a time) */
} Conn;

static void conn_close_my(Conn *c) {
    MYSQL *m = c->m, *w = c->w;
    c->m = c->w = NULL;
    Py_BEGIN_ALLOW_THREADS
    if (m) mysql_close(m);
    if (w) mysql_close(w);
    Py_END_ALLOW_THREADS
}

static void conn_dealloc(Conn *c) {
    conn_close_my(c);
    if (c->r.res) mysql_free_result(c->r.res);
    for (int j = 0; j < NSTMT; j++) tmpl_free(&c->t[j]);
    for (int n = 0; c->mt && n <= MAX_MULTI; n++) tmpl_free(&c->mt[n]);
    free(c->mt), free(c->q);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

/* m connected with autocommit on or off: 1, else 0 (its error in m) */
static int my_connect(MYSQL *m, const char *host, const char *user, const char *password, const char *db,
                      int port, const char *sock, unsigned timeout, int autocommit) {
    mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
    mysql_options(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    return mysql_real_connect(m, host, user, password, db, (unsigned)port, sock, CLIENT_FOUND_ROWS)
           && !mysql_autocommit(m, (my_bool)autocommit);
}

/* Conn(host, user, password, database, port, unix_socket=None, connect_timeout=10) */
static PyObject *conn_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    const char *host, *user, *password, *db, *sock = NULL;
    int port;
    unsigned int timeout = 10;
    if (!PyArg_ParseTuple(args, "ssssi|zI", &host, &user, &password, &db, &port, &sock, &timeout))
        return NULL;
    Conn *c = (Conn *)type->tp_alloc(type, 0);
    if (!c) return NULL;
    MYSQL *m = mysql_init(NULL), *w = mysql_init(NULL);
    int okm = 0, okw = 0;
    Py_BEGIN_ALLOW_THREADS
    okm = m && w && my_connect(m, host, user, password, db, port, sock, timeout, 1);
    okw = okm && my_connect(w, host, user, password, db, port, sock, timeout, 0);
    Py_END_ALLOW_THREADS
    c->m = m, c->w = w;
    if (!okw) {
        /* ConnectionError(code, message) as the libraries' errors carry them; the message
         * names the host and user, never the password */
        MYSQL *bad = m && w ? (okm ? w : m) : NULL;
        const char *e = bad ? mysql_error(bad) : "out of memory";
        PyObject *err = Py_BuildValue("(Is#)", bad ? mysql_errno(bad) : 0u, e, (Py_ssize_t)strcspn(e, "\n"));
        if (err) PyErr_SetObject(PyExc_ConnectionError, err);
        Py_XDECREF(err);
        Py_DECREF(c);
        return NULL;
    }
    return (PyObject *)c;
}

/* conn.prepare(statements, range_limit): the 12 statements of the STMT order (%s markers) */
static PyObject *conn_prepare(Conn *c, PyObject *args) {
    PyObject *list;
    long long limit;
    if (!PyArg_ParseTuple(args, "O!L", &PyList_Type, &list, &limit)) return NULL;
    if (PyList_GET_SIZE(list) != NSTMT) return PyErr_Format(PyExc_ValueError, "%d statements expected", NSTMT);
    for (int j = 0; j < NSTMT; j++) {
        tmpl_free(&c->t[j]);
        if (split_tmpl(&c->t[j], PyList_GET_ITEM(list, j))) return NULL;
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
    if (!c->mt && !(c->mt = calloc(MAX_MULTI + 1, sizeof *c->mt))) return PyErr_NoMemory();
    if (!c->multi[n]) {
        if (split_tmpl(&c->mt[n], sql)) return NULL;
        if (c->mt[n].n != n + 2) {
            tmpl_free(&c->mt[n]);
            return PyErr_Format(PyExc_ValueError, "MULTIGET_LINK for %d id2s: %d markers expected", n, n + 2);
        }
        c->multi[n] = 1;
    }
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ _lbops.h's calls on libmariadb */

typedef myres_t *res_t;

static int reserve(Conn *c, size_t need) {
    if (need <= c->cap) return 0;
    size_t cap = c->cap ? c->cap : 4096;
    while (cap < need) cap *= 2;
    char *q = realloc(c->q, cap);
    if (!q) return -1;
    c->q = q, c->cap = cap;
    return 0;
}

/* statement q (len bytes) sent on m, its outcome in c->r */
static res_t send(Conn *c, MYSQL *m, const char *q, size_t len) {
    myres_t *r = &c->r;
    r->ok = 0, r->err = 0, r->affected = 0, r->res = NULL;
    if (!m) {
        r->err = CR_SERVER_GONE_ERROR;
        return r;
    }
    if (mysql_real_query(m, q, (unsigned long)len)) {
        r->err = mysql_errno(m);
    } else if (mysql_field_count(m)) {
        if (!(r->res = mysql_store_result(m))) r->err = mysql_errno(m);
        else r->ok = 1;
    } else {
        r->affected = mysql_affected_rows(m), r->ok = 1;
    }
    if (!r->ok && r->err != ER_DUP_ENTRY) c->gone = -1;
    return r;
}

/* statement s's text with q's values in place: numbers as they are, the payload as X'hex' */
static res_t db_ex(Conn *c, int w, int s, const params_t *q) {
    const tmpl_t *t = &c->t[s];
    size_t need = 1;
    for (int j = 0; j <= t->n; j++)
        need += t->len[j] + (j < q->n ? (j == q->bin ? 2 * (size_t)q->len[j] + 3 : strlen(q->v[j])) : 0);
    if (q->n != t->n || reserve(c, need)) {
        c->r.ok = 0, c->r.err = 0, c->r.res = NULL;
        return &c->r;
    }
    char *x = c->q;
    for (int j = 0; j <= t->n; j++) {
        memcpy(x, t->text + t->off[j], t->len[j]);
        x += t->len[j];
        if (j == t->n) break;
        if (j == q->bin) {
            *x++ = 'X', *x++ = '\'';
            x += mysql_hex_string(x, q->v[j], (unsigned long)q->len[j]);
            *x++ = '\'';
        } else {
            size_t vl = strlen(q->v[j]);
            memcpy(x, q->v[j], vl);
            x += vl;
        }
    }
    *x = 0;
    return send(c, w ? c->w : c->m, c->q, (size_t)(x - c->q));
}

/* autocommit off: the server opens the transaction with its first statement */
static res_t db_begin_with(Conn *c, int s, const params_t *q) { return db_ex(c, 1, s, q); }

/* MULTIGET_LINK: id1, link_type and the n id2s in the IN list's template */
static res_t db_multiget(Conn *c, const lop_t *op, const int64_t *ids) {
    const tmpl_t *t = &c->mt[op->nm];
    size_t need = 1;
    for (int j = 0; j <= t->n; j++) need += t->len[j] + 21;
    if (reserve(c, need)) {
        c->r.ok = 0, c->r.err = 0, c->r.res = NULL;
        return &c->r;
    }
    char *x = c->q;
    for (int j = 0; j <= t->n; j++) {
        memcpy(x, t->text + t->off[j], t->len[j]);
        x += t->len[j];
        if (j == t->n) break;
        x += sprintf(x, "%lld", (long long)(j == 0 ? op->a : j == 1 ? op->t : ids[j - 2]));
    }
    *x = 0;
    return send(c, c->m, c->q, (size_t)(x - c->q));
}

static int db_ok(res_t r) { return r->ok; }
static int db_dup(res_t r) { return !r->ok && r->err == ER_DUP_ENTRY; }
static int db_matched(res_t r) { return r->affected > 0; }   /* CLIENT_FOUND_ROWS: matched */
static int db_nrows(res_t r) { return r->res ? (int)mysql_num_rows(r->res) : 0; }

static const char *db_value(res_t r, int row, int col) {
    mysql_data_seek(r->res, (my_ulonglong)row);
    MYSQL_ROW v = mysql_fetch_row(r->res);
    return v && v[col] ? v[col] : "";
}

static void db_clear(res_t r) {
    if (r->res) mysql_free_result(r->res);
    r->res = NULL;
}

static int db_commit(Conn *c) {
    if (c->w && !mysql_commit(c->w)) return 1;
    c->gone = -1;
    return 0;
}

static void db_rollback(Conn *c) {   /* as mysqlclient's rollback(): sent whatever the state */
    if (c->w && mysql_rollback(c->w)) c->gone = -1;
}

/* lost: either connection, by the server's word or no answer to a ping (asked once after an error) */
static int my_bad(MYSQL *m) {
    if (!m) return 1;
    unsigned e = mysql_errno(m);
    return e == CR_SERVER_GONE_ERROR || e == CR_SERVER_LOST || e == ER_CONNECTION_KILLED || mysql_ping(m) != 0;
}

static int db_lost(Conn *c) {
    if (!c->m || !c->w) return 1;
    if (c->gone < 0) c->gone = my_bad(c->m) || my_bad(c->w);
    return c->gone;
}

#include "_lbops.h"   /* the requests themselves: lb_op, conn.run */

static PyObject *conn_close(Conn *c, PyObject *unused) {
    conn_close_my(c);
    Py_RETURN_NONE;
}

static PyObject *conn_get_closed(Conn *c, void *unused) {
    return PyBool_FromLong(!c->m || !c->w || (c->gone != 0 && db_lost(c)));
}

static PyObject *conn_get_thread_id(Conn *c, void *unused) {
    return PyLong_FromUnsignedLong(c->m ? mysql_thread_id(c->m) : 0);
}

static PyObject *conn_get_write_thread_id(Conn *c, void *unused) {
    return PyLong_FromUnsignedLong(c->w ? mysql_thread_id(c->w) : 0);
}

static PyMethodDef conn_methods[] = {
    {"prepare", (PyCFunction)conn_prepare, METH_VARARGS, "the 12 statements' templates"},
    {"prepare_multiget", (PyCFunction)conn_prepare_multiget, METH_VARARGS, "MULTIGET_LINK's for n id2s"},
    {"run", (PyCFunction)conn_run, METH_VARARGS, "run a plan's requests i .. stop-1"},
    {"close", (PyCFunction)conn_close, METH_NOARGS, "close the connections"},
    {NULL}};

static PyGetSetDef conn_getset[] = {
    {"thread_id", (getter)conn_get_thread_id, NULL, "the reads' connection id on the server", NULL},
    {"write_thread_id", (getter)conn_get_write_thread_id, NULL, "the link writes' connection id", NULL},
    {"closed", (getter)conn_get_closed, NULL, "True when a connection is gone", NULL},
    {NULL}};

static PyTypeObject ConnType =
    CONN_TYPE(Conn, "two libmariadb connections with LinkBench's statements", conn_new, conn_dealloc,
              conn_methods, conn_getset);

static PyMethodDef no_functions[] = {{NULL}};
static struct PyModuleDef lb_def = {PyModuleDef_HEAD_INIT, LOOP_NAME, NULL, -1, no_functions};

PyMODINIT_FUNC PyInit__lbmyloop(void) { return loop_module(&lb_def, &PlanType, &ConnType, op_names); }
