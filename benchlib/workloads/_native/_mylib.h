/* What libmariadb's loops share (_myloop.c, _lbmyloop.c; included after errmsg.h and mysql.h): a
 * connection opened as both open theirs, its failure as the Python libraries report it,
 * and a statement as both send it: its text split at its %s placeholders once, each value
 * written in place when it is sent (mysql_real_query), as mysqlclient and PyMySQL format
 * statements client-side. */
#ifndef MYLIB_H
#define MYLIB_H

#ifndef ER_CONNECTION_KILLED
#define ER_CONNECTION_KILLED 1927
#endif

/* m lost, after an error: the server said so (gone, lost, killed), or it does not answer a ping */
static int my_lost(MYSQL *m) {
    unsigned e = mysql_errno(m);
    return e == CR_SERVER_GONE_ERROR || e == CR_SERVER_LOST || e == ER_CONNECTION_KILLED || mysql_ping(m) != 0;
}

/* Conn(host, user, password, database, port, unix_socket=None, connect_timeout=10)'s arguments */
typedef struct {
    const char *host, *user, *password, *db, *sock;
    int port;
    unsigned int timeout;
} my_args;

static int my_parse(PyObject *args, my_args *a) {
    a->sock = NULL, a->timeout = 10;
    return PyArg_ParseTuple(args, "ssssi|zI", &a->host, &a->user, &a->password, &a->db, &a->port, &a->sock,
                            &a->timeout);
}

/* m connected as a says (connect timeout, utf8mb4, `flags`; nonblock: libmariadb's
 * non-blocking calls allowed as well) with autocommit on or off: 1, else 0 (the error in m) */
static int my_connect(MYSQL *m, const my_args *a, unsigned long flags, int autocommit, int nonblock) {
    mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &a->timeout);
    mysql_options(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    if (nonblock) mysql_options(m, MYSQL_OPT_NONBLOCK, 0);
    return mysql_real_connect(m, a->host, a->user, a->password, a->db, (unsigned)a->port, a->sock, flags)
           && !mysql_autocommit(m, (my_bool)autocommit);
}

/* ConnectionError(code, message) as the libraries' errors carry them
 * (mysql_driver.error_text), m's (NULL: out of memory); the message names the host and
 * user, never the password */
static void my_connect_error(MYSQL *m) {
    const char *e = m ? mysql_error(m) : "out of memory";
    PyObject *err = Py_BuildValue("(Is#)", m ? mysql_errno(m) : 0u, e, (Py_ssize_t)strcspn(e, "\n"));
    if (err) PyErr_SetObject(PyExc_ConnectionError, err);
    Py_XDECREF(err);
}

/* a statement's text split at its %s placeholders: n + 1 pieces */
typedef struct {
    char *text;
    int n;
    size_t *off, *len;
} tmpl_t;

static void tmpl_free(tmpl_t *t) {
    free(t->text), free(t->off), free(t->len);
    t->text = NULL, t->off = t->len = NULL;
}

static int split_tmpl(tmpl_t *t, PyObject *sql) {
    if (!PyBytes_Check(sql)) {
        PyErr_SetString(PyExc_TypeError, "statements must be bytes");
        return -1;
    }
    const char *s = PyBytes_AS_STRING(sql);
    size_t len = (size_t)PyBytes_GET_SIZE(sql);
    int n = 0;
    for (const char *x = s; (x = strstr(x, "%s")); x += 2) n++;
    t->text = malloc(len + 1);
    t->off = calloc(n + 1, sizeof *t->off);
    t->len = calloc(n + 1, sizeof *t->len);
    if (!t->text || !t->off || !t->len) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(t->text, s, len + 1);
    t->n = n;
    size_t at = 0;
    for (int j = 0; j <= n; j++) {
        const char *x = j < n ? strstr(s + at, "%s") : s + len;
        t->off[j] = at;
        t->len[j] = (size_t)(x - (s + at));
        at = (size_t)(x - s) + 2;
    }
    return 0;
}

#endif
