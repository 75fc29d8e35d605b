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
#include "_mylib.h"

#ifndef ER_DUP_ENTRY
#define ER_DUP_ENTRY 1062
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

static void db_close(Conn *c) {
    MYSQL *m = c->m, *w = c->w;
    c->m = c->w = NULL;
    Py_BEGIN_ALLOW_THREADS
    if (m) mysql_close(m);
    if (w) mysql_close(w);
    Py_END_ALLOW_THREADS
}

static void conn_dealloc(Conn *c) {
    db_close(c);
    if (c->r.res) mysql_free_result(c->r.res);
    for (int j = 0; j < NSTMT; j++) tmpl_free(&c->t[j]);
    for (int n = 0; c->mt && n <= MAX_MULTI; n++) tmpl_free(&c->mt[n]);
    free(c->mt), free(c->q);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

/* Conn(host, user, password, database, port, unix_socket=None, connect_timeout=10) */
static PyObject *conn_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    my_args a;
    if (!my_parse(args, &a)) return NULL;
    Conn *c = (Conn *)type->tp_alloc(type, 0);
    if (!c) return NULL;
    MYSQL *m = mysql_init(NULL), *w = mysql_init(NULL);
    int okm = 0, okw = 0;
    Py_BEGIN_ALLOW_THREADS
    okm = m && w && my_connect(m, &a, CLIENT_FOUND_ROWS, 1, 0);
    okw = okm && my_connect(w, &a, CLIENT_FOUND_ROWS, 0, 0);
    Py_END_ALLOW_THREADS
    c->m = m, c->w = w;
    if (!okw) {
        my_connect_error(m && w ? (okm ? w : m) : NULL);
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

/* the statement in c->q (len bytes) sent on m, its outcome in c->r */
static res_t send(Conn *c, MYSQL *m, size_t len) {
    myres_t *r = &c->r;
    r->ok = 0, r->err = 0, r->affected = 0, r->res = NULL;
    if (!m) {
        r->err = CR_SERVER_GONE_ERROR;
        note_error("connection closed");
        return r;
    }
    if (mysql_real_query(m, c->q, (unsigned long)len)) {
        r->err = mysql_errno(m);
    } else if (mysql_field_count(m)) {
        if (!(r->res = mysql_store_result(m))) r->err = mysql_errno(m);
        else r->ok = 1;
    } else {
        r->affected = mysql_affected_rows(m), r->ok = 1;
    }
    if (!r->ok && r->err != ER_DUP_ENTRY) c->gone = -1;
    if (!r->ok) note_error(m ? mysql_error(m) : "connection closed");
    return r;
}

/* value j written at x: its length */
typedef size_t (*put_fn)(const void *vals, int j, char *x);

/* template t with its values in place (put; `values`: their most bytes) sent on m */
static res_t fill_send(Conn *c, MYSQL *m, const tmpl_t *t, size_t values, put_fn put, const void *vals) {
    size_t need = values + 1;
    for (int j = 0; j <= t->n; j++) need += t->len[j];
    if (reserve(c, need)) {
        note_error("out of memory");
        c->r.ok = 0, c->r.err = 0, c->r.res = NULL;
        return &c->r;
    }
    char *x = c->q;
    for (int j = 0; j <= t->n; j++) {
        memcpy(x, t->text + t->off[j], t->len[j]);
        x += t->len[j];
        if (j < t->n) x += put(vals, j, x);
    }
    *x = 0;
    return send(c, m, (size_t)(x - c->q));
}

/* a statement's parameter: a number as it is, the payload as X'hex' */
static size_t put_param(const void *vals, int j, char *x) {
    const params_t *q = vals;
    if (j != q->bin) {
        size_t n = strlen(q->v[j]);
        memcpy(x, q->v[j], n);
        return n;
    }
    x[0] = 'X', x[1] = '\'';
    size_t n = mysql_hex_string(x + 2, q->v[j], (unsigned long)q->len[j]);
    x[n + 2] = '\'';
    return n + 3;
}

static res_t db_ex(Conn *c, int w, int s, const params_t *q) {
    const tmpl_t *t = &c->t[s];
    size_t values = 0;
    for (int j = 0; j < q->n; j++) values += j == q->bin ? 2 * (size_t)q->len[j] + 3 : strlen(q->v[j]);
    if (q->n != t->n) {   /* the statements are not the binding's: an ERROR */
        note_error("a statement's parameters are not the binding's");
        c->r.ok = 0, c->r.err = 0, c->r.res = NULL;
        return &c->r;
    }
    return fill_send(c, w ? c->w : c->m, t, values, put_param, q);
}

/* autocommit off: the server opens the transaction with its first statement */
static res_t db_begin_with(Conn *c, int s, const params_t *q) { return db_ex(c, 1, s, q); }

typedef struct {
    const lop_t *op;
    const int64_t *ids;
} multi_vals;

static size_t put_id(const void *vals, int j, char *x) {   /* id1, link_type, then the id2s */
    const multi_vals *v = vals;
    return (size_t)sprintf(x, "%lld", (long long)(j == 0 ? v->op->a : j == 1 ? v->op->t : v->ids[j - 2]));
}

/* MULTIGET_LINK: id1, link_type and the n id2s in the IN list's template */
static res_t db_multiget(Conn *c, const lop_t *op, const int64_t *ids) {
    multi_vals v = {op, ids};
    return fill_send(c, c->m, &c->mt[op->nm], 21 * ((size_t)op->nm + 2), put_id, &v);
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
    note_error(c->w ? mysql_error(c->w) : "connection closed");
    c->gone = -1;
    return 0;
}

static void db_rollback(Conn *c) {   /* as mysqlclient's rollback(): sent whatever the state */
    if (c->w && mysql_rollback(c->w)) c->gone = -1;
}

/* lost: either connection, by the server's word or no answer to a ping (asked once after an error) */
static int db_lost(Conn *c) {
    if (!c->m || !c->w) return 1;
    if (c->gone < 0) c->gone = my_lost(c->m) || my_lost(c->w);
    return c->gone;
}

#include "_lbops.h"   /* the requests themselves: lb_op, conn.run */

static PyObject *conn_get_closed(Conn *c, void *unused) {
    return PyBool_FromLong(!c->m || !c->w || (c->gone != 0 && db_lost(c)));
}

static PyObject *conn_get_thread_id(Conn *c, void *unused) {
    return PyLong_FromUnsignedLong(c->m ? mysql_thread_id(c->m) : 0);
}

static PyObject *conn_get_write_thread_id(Conn *c, void *unused) {
    return PyLong_FromUnsignedLong(c->w ? mysql_thread_id(c->w) : 0);
}

static PyGetSetDef conn_getset[] = {
    {"thread_id", (getter)conn_get_thread_id, NULL, "the reads' connection id on the server", NULL},
    {"write_thread_id", (getter)conn_get_write_thread_id, NULL, "the link writes' connection id", NULL},
    {"closed", (getter)conn_get_closed, NULL, "True when a connection is gone", NULL},
    {NULL}};

LB_MODULE(PyInit__lbmyloop, "two libmariadb connections with LinkBench's statements", conn_getset)
