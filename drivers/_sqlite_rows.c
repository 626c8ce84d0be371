/* drivers._sqlite_rows: one SQLite statement, run on the database handle of a connection opened by
 * Python's sqlite3 module, read either as tuples or as CSV text made in C.
 *
 * Why it exists: a CSV download of a million rows through the sqlite3 module spends most of its
 * time making a Python object for every cell and then formatting it (docs/ARCHITECTURE.md,
 * "Exports, CSV speed"). Here a cell goes from SQLite's buffer to the text without becoming an
 * object. The statement runs on the sqlite3 module's own handle, so everything the SQLite driver
 * set on that connection applies unchanged: the authorizer, read-only mode, the attach limit, its
 * SQL functions and the timeout's progress handler.
 *
 * The text follows the rules core.export.csv states (its CsvLayout): NULL is empty; an integer is
 * written as str() writes it and a real as repr() does; text is written as it is, quoted when it
 * holds the separator, a double quote or a line break; a row whose only cell is empty is "". A
 * "text-datetime" column writes SQLite's "YYYY-MM-DD HH:MM:SS" as core.export.formatting's
 * text_datetime does. A value this module does not write itself goes to the column's Python
 * callable, and what that returns is written as the csv module writes a cell.
 *
 * fetch() can also read the text of chosen columns (iso_text()) as core.query.results writes temporal
 * text, "T" in place of the space at index 10, so a 2000-row card query does not convert its
 * datetime column again in Python, value by value.
 *
 * json() writes the rows as the JSON array core.query.results.encode_rows writes from the same
 * tuples (orjson's text: its escapes, its float form), so that a card query's rows go from SQLite's
 * buffer to the response without a Python object per cell. A cell it does not write itself (a blob,
 * an integer beyond the given bound) goes to a Python callable that returns its JSON text.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <sqlite3.h>
#include <string.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The start of the sqlite3 module's Connection object (CPython 3.8 to 3.14 keep this layout). */
typedef struct {
    PyObject_HEAD
    sqlite3 *db;
} ConnectionHead;

enum { KIND_PLAIN = 0, KIND_TEXT_DATETIME = 1, KIND_CALL = 2 };
enum { STATE_ROW, STATE_DONE };

static PyTypeObject *connection_type;
static PyObject *err_operational, *err_database, *err_integrity, *err_data, *err_internal, *err_interface,
                *err_programming;

typedef struct {
    PyObject_HEAD
    PyObject *connection;
    PyObject *names;  /* the column names, read once the statement is prepared */
    sqlite3 *db;
    sqlite3_stmt *st;
    int ncols;
    int state;
    /* the layout */
    int has_layout;
    char special[256];  /* bytes that make a text cell quoted */
    char separator;
    int *kinds;
    PyObject *calls;  /* tuple, one callable or None per column */
    /* fetch(): columns whose text is read as ISO-8601 (iso_text()), NULL when none */
    unsigned char *iso;
    /* the text being written */
    char *buf;
    Py_ssize_t len, cap;
    /* repr() of recently written reals, by bit pattern (prices and rates repeat; repr is most of a
       real cell's cost) */
    struct RealText *reals;
} Statement;

#define REAL_BITS 13
#define REAL_SLOTS (1 << REAL_BITS)
struct RealText {
    sqlite3_uint64 bits;
    char len;  /* 0: empty slot */
    char text[31];
};

/* ---- errors ------------------------------------------------------------------------------------ */

static PyObject *error_class(int code) {
    switch (code & 0xff) {
    case SQLITE_INTERNAL: case SQLITE_NOTFOUND: return err_internal;
    case SQLITE_CORRUPT: return err_database;
    case SQLITE_TOOBIG: return err_data;
    case SQLITE_CONSTRAINT: case SQLITE_MISMATCH: return err_integrity;
    case SQLITE_MISUSE: case SQLITE_RANGE: return err_interface;
    default: return err_operational;
    }
}

static void raise_sqlite(sqlite3 *db, int code) {
    if (PyErr_Occurred()) return;  /* a Python callback failed: keep its exception */
    if ((code & 0xff) == SQLITE_NOMEM) {
        PyErr_NoMemory();
        return;
    }
    PyErr_SetString(error_class(code), sqlite3_errmsg(db));
}

/* ---- stepping ---------------------------------------------------------------------------------- */

static int step(Statement *s) {
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sqlite3_step(s->st);
    Py_END_ALLOW_THREADS
    if (rc == SQLITE_ROW) {
        s->state = STATE_ROW;
        return 0;
    }
    s->state = STATE_DONE;
    if (rc == SQLITE_DONE) return 0;
    raise_sqlite(s->db, rc);
    return -1;
}

/* ---- the output buffer ------------------------------------------------------------------------- */

static int reserve(Statement *s, Py_ssize_t more) {
    if (s->len + more <= s->cap) return 0;
    Py_ssize_t cap = s->cap ? s->cap : 65536;
    while (cap < s->len + more) cap *= 2;
    char *grown = PyMem_Realloc(s->buf, cap);
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    s->buf = grown;
    s->cap = cap;
    return 0;
}

static int put(Statement *s, const char *data, Py_ssize_t n) {
    if (reserve(s, n) < 0) return -1;
    memcpy(s->buf + s->len, data, n);
    s->len += n;
    return 0;
}

static int put_int(Statement *s, sqlite3_int64 v) {
    char digits[24];
    int i = sizeof digits;
    /* Negatives are built from the negative side, so INT64_MIN needs no special case. */
    int negative = v < 0;
    if (!negative) v = -v;
    do {
        digits[--i] = (char)('0' - (v % 10));
        v /= 10;
    } while (v);
    if (negative) digits[--i] = '-';
    return put(s, digits + i, sizeof digits - i);
}

static int put_real(Statement *s, double v) {
    sqlite3_uint64 bits;
    memcpy(&bits, &v, sizeof bits);
    struct RealText *slot = NULL;
    if (s->reals == NULL) s->reals = PyMem_Calloc(REAL_SLOTS, sizeof *s->reals);
    if (s->reals != NULL) {
        slot = &s->reals[(bits * 0x9E3779B97F4A7C15ULL) >> (64 - REAL_BITS)];
        if (slot->len && slot->bits == bits) return put(s, slot->text, slot->len);
    }
    char *text = PyOS_double_to_string(v, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);  /* what repr() writes */
    if (text == NULL) return -1;
    size_t n = strlen(text);
    if (slot != NULL && n < sizeof slot->text) {
        slot->bits = bits;
        slot->len = (char)n;
        memcpy(slot->text, text, n);
    }
    int rc = put(s, text, (Py_ssize_t)n);
    PyMem_Free(text);
    return rc;
}

/* Text as a csv cell: as it is, or quoted with its double quotes doubled when it holds a special byte. */
static int put_text(Statement *s, const unsigned char *text, Py_ssize_t n) {
    Py_ssize_t i;
    for (i = 0; i < n; i++)
        if (s->special[text[i]]) break;
    if (i == n) return put(s, (const char *)text, n);
    Py_ssize_t quotes = 0;
    for (i = 0; i < n; i++) quotes += text[i] == '"';
    if (reserve(s, n + quotes + 2) < 0) return -1;
    char *out = s->buf + s->len;
    *out++ = '"';
    for (i = 0; i < n; i++) {
        if (text[i] == '"') *out++ = '"';
        *out++ = (char)text[i];
    }
    *out++ = '"';
    s->len = out - s->buf;
    return 0;
}

/* What the csv module writes for a Python value: None empty, a float its repr(), anything else str(). */
static int put_object(Statement *s, PyObject *value) {
    if (value == Py_None) return 0;
    PyObject *text = PyUnicode_Check(value) ? (Py_INCREF(value), value)
                   : PyFloat_Check(value) ? PyObject_Repr(value) : PyObject_Str(value);
    if (text == NULL) return -1;
    Py_ssize_t n;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &n);
    int rc = utf8 == NULL ? -1 : put_text(s, (const unsigned char *)utf8, n);
    Py_DECREF(text);
    return rc;
}

/* ---- cells ------------------------------------------------------------------------------------- */

static int is_ascii(const unsigned char *text, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++)
        if (text[i] & 0x80) return 0;
    return 1;
}

/* A text cell as the sqlite3 module returns it: a str, decoded strictly. */
static PyObject *text_object(Statement *s, int column) {
    const char *text = (const char *)sqlite3_column_text(s->st, column);
    Py_ssize_t n = sqlite3_column_bytes(s->st, column);
    if (text == NULL) {
        if (sqlite3_errcode(s->db) == SQLITE_NOMEM) return PyErr_NoMemory();
        return PyUnicode_FromStringAndSize("", 0);
    }
    PyObject *value = PyUnicode_DecodeUTF8(text, n, NULL);
    if (value == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
        PyErr_Clear();
        PyErr_Format(err_operational, "Could not decode to UTF-8 column '%s' with text '%.40s'",
                     sqlite3_column_name(s->st, column), text);
    }
    return value;
}

/* The cell as the Python value the sqlite3 module would return for it. */
static PyObject *cell_object(Statement *s, int column) {
    switch (sqlite3_column_type(s->st, column)) {
    case SQLITE_INTEGER: return PyLong_FromLongLong(sqlite3_column_int64(s->st, column));
    case SQLITE_FLOAT: return PyFloat_FromDouble(sqlite3_column_double(s->st, column));
    case SQLITE_TEXT: return text_object(s, column);
    case SQLITE_BLOB: {
        const void *data = sqlite3_column_blob(s->st, column);
        return PyBytes_FromStringAndSize(data, data ? sqlite3_column_bytes(s->st, column) : 0);
    }
    default: Py_RETURN_NONE;
    }
}

/* A text cell of an iso_text() column: SQLite's "YYYY-MM-DD HH:MM:SS..." with "T" for the space at
 * index 10, as core.query.results writes temporal text (any str of 19+ characters with a space at
 * index 10 gets the T; other text and other values as cell_object gives them). */
static PyObject *iso_text_object(Statement *s, int column) {
    const unsigned char *text = sqlite3_column_text(s->st, column);
    Py_ssize_t n = sqlite3_column_bytes(s->st, column);
    if (text != NULL && n >= 19 && text[10] == ' ' && is_ascii(text, n)) {
        PyObject *value = PyUnicode_New(n, 127);
        if (value == NULL) return NULL;
        Py_UCS1 *data = PyUnicode_1BYTE_DATA(value);
        memcpy(data, text, n);
        data[10] = 'T';
        return value;
    }
    PyObject *value = text_object(s, column);
    if (value == NULL || PyUnicode_GET_LENGTH(value) < 19 || PyUnicode_READ_CHAR(value, 10) != ' ') return value;
    PyObject *head = PyUnicode_Substring(value, 0, 10);
    PyObject *tail = PyUnicode_Substring(value, 11, PyUnicode_GET_LENGTH(value));
    PyObject *result = NULL;
    if (head != NULL && tail != NULL) result = PyUnicode_FromFormat("%UT%U", head, tail);
    Py_XDECREF(head);
    Py_XDECREF(tail);
    Py_DECREF(value);
    return result;
}

static int put_called(Statement *s, int column) {
    PyObject *call = PyTuple_GET_ITEM(s->calls, column);
    PyObject *value = cell_object(s, column);
    if (value == NULL) return -1;
    if (call != Py_None) {
        PyObject *written = PyObject_CallOneArg(call, value);
        Py_DECREF(value);
        if (written == NULL) return -1;
        value = written;
    }
    int rc = put_object(s, value);
    Py_DECREF(value);
    return rc;
}

static const char *const MIDNIGHTS[] = {"00:00:00", "00:00:00.000", "00:00:00.000000"};

/* SQLite's datetime text ("2024-01-05 13:45:00") as text_datetime writes it: "2024-01-05T13:45:00",
 * or the date alone at midnight. Returns 1 when written, 0 when the text has another shape. */
static int put_text_datetime(Statement *s, const unsigned char *text, Py_ssize_t n, int *rc) {
    if (n < 19 || text[10] != ' ') return 0;
    for (size_t m = 0; m < sizeof MIDNIGHTS / sizeof *MIDNIGHTS; m++)
        if ((Py_ssize_t)strlen(MIDNIGHTS[m]) == n - 11 && memcmp(text + 11, MIDNIGHTS[m], n - 11) == 0) {
            *rc = put_text(s, text, 10);
            return 1;
        }
    if (reserve(s, n + 2) < 0) {
        *rc = -1;
        return 1;
    }
    Py_ssize_t start = s->len;
    memcpy(s->buf + s->len, text, n);
    s->buf[start + 10] = 'T';
    s->len += n;
    /* The T and the rest may still need quoting (a comma in the text, say): write it as text. */
    for (Py_ssize_t i = start; i < s->len; i++)
        if (s->special[(unsigned char)s->buf[i]]) {
            char *copy = PyMem_Malloc(n);
            if (copy == NULL) {
                PyErr_NoMemory();
                *rc = -1;
                return 1;
            }
            memcpy(copy, s->buf + start, n);
            s->len = start;
            *rc = put_text(s, (const unsigned char *)copy, n);
            PyMem_Free(copy);
            return 1;
        }
    *rc = 0;
    return 1;
}

/* A cell of the current row. Read through its sqlite3_value: the sqlite3_value_* calls take no
 * mutex (each sqlite3_column_* call does), and csv() holds the connection's mutex meanwhile, which
 * is what makes the value "protected" as those calls require. */
static int put_cell(Statement *s, int column) {
    int kind = s->kinds[column];
    sqlite3_value *value = sqlite3_column_value(s->st, column);
    int type = sqlite3_value_type(value);
    if (type == SQLITE_NULL) return 0;
    if (kind == KIND_CALL) return put_called(s, column);
    switch (type) {
    case SQLITE_INTEGER: return put_int(s, sqlite3_value_int64(value));
    case SQLITE_FLOAT: return put_real(s, sqlite3_value_double(value));
    case SQLITE_TEXT: {
        const unsigned char *text = sqlite3_value_text(value);
        Py_ssize_t n = sqlite3_value_bytes(value);
        if (text == NULL) return sqlite3_errcode(s->db) == SQLITE_NOMEM ? (PyErr_NoMemory(), -1) : 0;
        if (!is_ascii(text, n)) {
            /* Checked (and, for a datetime column, written) by Python: a str's characters are not its bytes. */
            if (kind == KIND_TEXT_DATETIME) return put_called(s, column);
            PyObject *value = text_object(s, column);
            if (value == NULL) return -1;
            Py_DECREF(value);
            return put_text(s, text, n);
        }
        if (kind == KIND_TEXT_DATETIME) {
            int rc;
            if (put_text_datetime(s, text, n, &rc)) return rc;
        }
        return put_text(s, text, n);
    }
    default: return put_called(s, column);
    }
}

/* ---- the Statement type ------------------------------------------------------------------------ */

/* Whether the SQL after the first statement is only blanks and comments (as the sqlite3 module checks). */
static int only_comments(const char *tail) {
    const char *p = tail;
    while (*p) {
        if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == ';') {
            p++;
        } else if (p[0] == '-' && p[1] == '-') {
            while (*p && *p != '\n') p++;
        } else if (p[0] == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            if (end == NULL) return 1;
            p = end + 2;
        } else {
            return 0;
        }
    }
    return 1;
}

static int bind(Statement *s, PyObject *params) {
    PyObject *seq = PySequence_Fast(params, "parameters must be a sequence");
    if (seq == NULL) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n != sqlite3_bind_parameter_count(s->st)) {
        PyErr_Format(err_programming, "Incorrect number of bindings supplied. The current statement uses %d, "
                     "and there are %zd supplied.", sqlite3_bind_parameter_count(s->st), n);
        Py_DECREF(seq);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PySequence_Fast_GET_ITEM(seq, i);
        int rc, at = (int)i + 1;
        if (v == Py_None) {
            rc = sqlite3_bind_null(s->st, at);
        } else if (PyLong_Check(v)) {
            sqlite3_int64 number = PyLong_AsLongLong(v);
            if (number == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                PyErr_SetString(PyExc_OverflowError, "Python int too large to convert to SQLite INTEGER");
                Py_DECREF(seq);
                return -1;
            }
            rc = sqlite3_bind_int64(s->st, at, number);
        } else if (PyFloat_Check(v)) {
            rc = sqlite3_bind_double(s->st, at, PyFloat_AS_DOUBLE(v));
        } else if (PyUnicode_Check(v)) {
            Py_ssize_t size;
            const char *text = PyUnicode_AsUTF8AndSize(v, &size);
            if (text == NULL) {
                Py_DECREF(seq);
                return -1;
            }
            rc = sqlite3_bind_text64(s->st, at, text, size, SQLITE_TRANSIENT, SQLITE_UTF8);
        } else if (PyBytes_Check(v)) {
            rc = sqlite3_bind_blob64(s->st, at, PyBytes_AS_STRING(v), PyBytes_GET_SIZE(v), SQLITE_TRANSIENT);
        } else {
            PyErr_Format(err_programming, "Error binding parameter %zd: type '%s' is not supported", i + 1,
                         Py_TYPE(v)->tp_name);
            Py_DECREF(seq);
            return -1;
        }
        if (rc != SQLITE_OK) {
            raise_sqlite(s->db, rc);
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    return 0;
}

static void finalize(Statement *s) {
    if (s->st != NULL) {
        sqlite3_stmt *st = s->st;
        s->st = NULL;
        Py_BEGIN_ALLOW_THREADS
        sqlite3_finalize(st);
        Py_END_ALLOW_THREADS
    }
    s->state = STATE_DONE;
}

static PyObject *column_names(sqlite3_stmt *st, int n) {
    PyObject *names = PyTuple_New(n);
    if (names == NULL) return NULL;
    for (int i = 0; i < n; i++) {
        const char *name = sqlite3_column_name(st, i);
        PyObject *text = name ? PyUnicode_FromString(name) : (Py_INCREF(Py_None), Py_None);
        if (text == NULL) {
            Py_DECREF(names);
            return NULL;
        }
        PyTuple_SET_ITEM(names, i, text);
    }
    return names;
}

static int Statement_init(Statement *s, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"connection", "sql", "params", NULL};
    PyObject *connection, *params;
    const char *sql;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!sO", names, connection_type, &connection, &sql, &params))
        return -1;
    if (s->st != NULL || s->connection != NULL) {
        PyErr_SetString(PyExc_TypeError, "a Statement is initialised once");
        return -1;
    }
    sqlite3 *db = ((ConnectionHead *)connection)->db;
    if (db == NULL) {
        PyErr_SetString(err_programming, "Cannot operate on a closed database.");
        return -1;
    }
    Py_INCREF(connection);
    s->connection = connection;
    s->db = db;
    s->state = STATE_DONE;
    const char *tail = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sqlite3_prepare_v2(db, sql, -1, &s->st, &tail);
    Py_END_ALLOW_THREADS
    if (rc != SQLITE_OK) {
        raise_sqlite(db, rc);
        finalize(s);
        return -1;
    }
    if (s->st == NULL || (tail != NULL && !only_comments(tail))) {
        finalize(s);
        PyErr_SetString(err_programming, s->st == NULL && (tail == NULL || only_comments(sql))
                        ? "nothing to execute" : "You can only execute one statement at a time.");
        return -1;
    }
    s->ncols = sqlite3_column_count(s->st);
    s->names = column_names(s->st, s->ncols);
    if (s->names == NULL || bind(s, params) < 0 || step(s) < 0) {
        finalize(s);
        return -1;
    }
    return 0;
}

static void Statement_dealloc(Statement *s) {
    finalize(s);
    Py_XDECREF(s->connection);
    Py_XDECREF(s->names);
    Py_XDECREF(s->calls);
    PyMem_Free(s->kinds);
    PyMem_Free(s->iso);
    PyMem_Free(s->buf);
    PyMem_Free(s->reals);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyObject *Statement_columns(Statement *s, void *Py_UNUSED(closure)) {
    if (s->names == NULL) {
        PyErr_SetString(err_programming, "the statement was never prepared");
        return NULL;
    }
    Py_INCREF(s->names);
    return s->names;
}

/* fetch(n): up to n rows as tuples of the values the sqlite3 module would return; [] at the end. */
static PyObject *Statement_fetch(Statement *s, PyObject *arg) {
    Py_ssize_t n = PyLong_AsSsize_t(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    PyObject *rows = PyList_New(0);
    if (rows == NULL) return NULL;
    while (n-- > 0 && s->state == STATE_ROW) {
        PyObject *row = PyTuple_New(s->ncols);
        if (row == NULL) goto fail;
        for (int i = 0; i < s->ncols; i++) {
            PyObject *value = s->iso != NULL && s->iso[i] && sqlite3_column_type(s->st, i) == SQLITE_TEXT
                ? iso_text_object(s, i) : cell_object(s, i);
            if (value == NULL) {
                Py_DECREF(row);
                goto fail;
            }
            PyTuple_SET_ITEM(row, i, value);
        }
        int appended = PyList_Append(rows, row);
        Py_DECREF(row);
        if (appended < 0 || step(s) < 0) goto fail;
    }
    if (s->state == STATE_DONE) finalize(s);
    return rows;
fail:
    Py_DECREF(rows);
    finalize(s);
    return NULL;
}

/* layout(separator, quote_cr, kinds, calls): how csv() writes cells (see the module docstring). */
static PyObject *Statement_layout(Statement *s, PyObject *args) {
    const char *separator;
    Py_ssize_t separator_size;
    int quote_cr;
    PyObject *kinds, *calls;
    if (!PyArg_ParseTuple(args, "s#pO!O!", &separator, &separator_size, &quote_cr, &PyTuple_Type, &kinds,
                          &PyTuple_Type, &calls))
        return NULL;
    if (separator_size != 1 || (separator[0] & 0x80) || strchr("\"\r\n", separator[0]) != NULL) {
        PyErr_SetString(PyExc_ValueError, "the separator must be one ASCII character, not a quote or line break");
        return NULL;
    }
    if (PyTuple_GET_SIZE(kinds) != s->ncols || PyTuple_GET_SIZE(calls) != s->ncols) {
        PyErr_Format(PyExc_ValueError, "the layout must name %d columns", s->ncols);
        return NULL;
    }
    int *parsed = PyMem_Calloc(s->ncols ? s->ncols : 1, sizeof(int));
    if (parsed == NULL) return PyErr_NoMemory();
    for (int i = 0; i < s->ncols; i++) {
        long kind = PyLong_AsLong(PyTuple_GET_ITEM(kinds, i));
        if (kind < KIND_PLAIN || kind > KIND_CALL) {
            PyMem_Free(parsed);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "unknown cell kind");
            return NULL;
        }
        parsed[i] = (int)kind;
    }
    PyMem_Free(s->kinds);
    s->kinds = parsed;
    Py_INCREF(calls);
    Py_XSETREF(s->calls, calls);
    memset(s->special, 0, sizeof s->special);
    s->special[(unsigned char)separator[0]] = s->special['"'] = s->special['\n'] = 1;
    s->special['\r'] = (char)quote_cr;
    s->separator = separator[0];
    s->has_layout = 1;
    Py_RETURN_NONE;
}

/* csv(max_bytes, max_rows): (text, rows, more): rows written until the text reaches max_bytes or
 * max_rows rows (None: no limit) are written; `more` says whether rows remain after them. */
static PyObject *Statement_csv(Statement *s, PyObject *args) {
    Py_ssize_t max_bytes, max_rows = -1;
    PyObject *limit;
    if (!PyArg_ParseTuple(args, "nO", &max_bytes, &limit)) return NULL;
    if (limit != Py_None && ((max_rows = PyLong_AsSsize_t(limit)) == -1 && PyErr_Occurred())) return NULL;
    if (!s->has_layout) {
        PyErr_SetString(PyExc_RuntimeError, "layout() first");
        return NULL;
    }
    Py_ssize_t rows = 0;
    s->len = 0;
    /* Every sqlite3_column_* call takes the connection's (recursive) mutex: held here for the chunk,
       each of those is a re-entry rather than a lock. The connection is this thread's for the query. */
    sqlite3_mutex *mutex = sqlite3_db_mutex(s->db);
    sqlite3_mutex_enter(mutex);
    while (s->state == STATE_ROW && s->len < max_bytes && (max_rows < 0 || rows < max_rows)) {
        Py_ssize_t start = s->len;
        for (int i = 0; i < s->ncols; i++) {
            if (i && put(s, &s->separator, 1) < 0) goto fail;
            if (put_cell(s, i) < 0) goto fail;
        }
        if (s->len == start && s->ncols == 1 && put(s, "\"\"", 2) < 0) goto fail;
        if (put(s, "\n", 1) < 0) goto fail;
        rows++;
        if (step(s) < 0) goto fail;
    }
    sqlite3_mutex_leave(mutex);
    int more = s->state == STATE_ROW;
    if (!more) finalize(s);
    return Py_BuildValue("(y#nO)", s->buf ? s->buf : "", s->len, rows, more ? Py_True : Py_False);
fail:
    sqlite3_mutex_leave(mutex);
    finalize(s);
    return NULL;
}

/* iso_text(columns): from the next fetch() on, the text cells of these columns as iso_text_object. */
static PyObject *Statement_iso_text(Statement *s, PyObject *arg) {
    PyObject *seq = PySequence_Fast(arg, "iso_text takes a sequence of column indexes");
    if (seq == NULL) return NULL;
    if (s->iso == NULL && s->ncols > 0) {
        s->iso = PyMem_Calloc(s->ncols, 1);
        if (s->iso == NULL) {
            Py_DECREF(seq);
            return PyErr_NoMemory();
        }
    }
    for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(seq); k++) {
        Py_ssize_t i = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(seq, k));
        if (i == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return NULL;
        }
        if (i < 0 || i >= s->ncols) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_IndexError, "iso_text: no such column");
            return NULL;
        }
        s->iso[i] = 1;
    }
    Py_DECREF(seq);
    Py_RETURN_NONE;
}

/* ---- JSON ---------------------------------------------------------------------------------------- */

static const char HEX[] = "0123456789abcdef";

/* UTF-8 text as a JSON string as orjson writes it: `"` and `\` escaped, control characters as \b \t
 * \n \f \r or \u00XX, everything else (non-ASCII included) as it is. The text must be valid UTF-8. */
static int put_json_string(Statement *s, const unsigned char *text, Py_ssize_t n) {
    if (reserve(s, 6 * n + 2) < 0) return -1;
    char *out = s->buf + s->len;
    *out++ = '"';
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = text[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            *out++ = (char)c;
            continue;
        }
        *out++ = '\\';
        switch (c) {
        case '"': *out++ = '"'; break;
        case '\\': *out++ = '\\'; break;
        case '\b': *out++ = 'b'; break;
        case '\t': *out++ = 't'; break;
        case '\n': *out++ = 'n'; break;
        case '\f': *out++ = 'f'; break;
        case '\r': *out++ = 'r'; break;
        default:
            *out++ = 'u'; *out++ = '0'; *out++ = '0'; *out++ = HEX[c >> 4]; *out++ = HEX[c & 15];
        }
    }
    *out++ = '"';
    s->len = out - s->buf;
    return 0;
}

static int put_json_str_object(Statement *s, PyObject *value) {
    Py_ssize_t n;
    const char *utf8 = PyUnicode_AsUTF8AndSize(value, &n);
    return utf8 == NULL ? -1 : put_json_string(s, (const unsigned char *)utf8, n);
}

/* A text cell: checked as the sqlite3 module decodes it (invalid UTF-8 fails the query as fetch()
 * would), then written; an iso_text() column's "YYYY-MM-DD HH:MM:SS" with "T" at index 10. */
static int put_json_text(Statement *s, int column) {
    const unsigned char *text = sqlite3_column_text(s->st, column);
    Py_ssize_t n = sqlite3_column_bytes(s->st, column);
    if (text == NULL) {
        if (sqlite3_errcode(s->db) == SQLITE_NOMEM) {
            PyErr_NoMemory();
            return -1;
        }
        return put(s, "\"\"", 2);
    }
    int iso = s->iso != NULL && s->iso[column];
    if (is_ascii(text, n)) {
        if (!iso || n < 19 || text[10] != ' ') return put_json_string(s, text, n);
        Py_ssize_t start = s->len;
        if (put_json_string(s, text, n) < 0) return -1;
        s->buf[start + 1 + 10] = 'T';  /* no byte before index 10 was escaped: it is a date's text */
        for (Py_ssize_t i = 0; i < 10; i++)
            if (text[i] < 0x20 || text[i] == '"' || text[i] == '\\') {
                s->len = start;  /* an escape moved index 10: written through the object instead */
                PyObject *value = iso_text_object(s, column);
                if (value == NULL) return -1;
                int rc = put_json_str_object(s, value);
                Py_DECREF(value);
                return rc;
            }
        return 0;
    }
    PyObject *value = iso ? iso_text_object(s, column) : text_object(s, column);
    if (value == NULL) return -1;
    int rc = put_json_str_object(s, value);
    Py_DECREF(value);
    return rc;
}

/* A real with at most 6 decimals, written from its digits without dtoa (prices, rates: most reals in
 * a BI result). For 1e-4 <= |v| < 2**30 two strings with k <= 6 decimals are 10**-k apart, more than
 * the double's whole rounding interval, so at most one round-trips; the nearest integer to v * 10**k
 * (off by less than 0.12 there) finds it, and the division, correctly rounded, proves it. The
 * smallest such k gives repr()'s shortest digits; 1 when written, 0 to leave it to repr(). */
static int put_short_real(Statement *s, double v, int *rc) {
    static const double POW10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6};
    double magnitude = fabs(v);
    if (!(magnitude >= 1e-4 && magnitude < 1073741824.0)) return 0;
    for (int k = 0; k <= 6; k++) {
        double scaled = nearbyint(v * POW10[k]);
        if (scaled / POW10[k] != v) continue;
        long long digits = llabs((long long)scaled);
        char text[32];
        int i = sizeof text;
        if (k == 0) text[--i] = '0';  /* repr() writes a whole real with ".0" */
        for (int d = 0; d < k; d++, digits /= 10) text[--i] = (char)('0' + digits % 10);
        text[--i] = '.';
        do {
            text[--i] = (char)('0' + digits % 10);
            digits /= 10;
        } while (digits);
        if (v < 0) text[--i] = '-';
        *rc = put(s, text + i, sizeof text - i);
        return 1;
    }
    return 0;
}

/* A real as orjson writes it: null for NaN and infinities; otherwise repr()'s digits, with an exponent
 * written without zero padding ("1e-6", "1e+16") and the exponent -5 written out ("0.00001"). */
static int put_json_real(Statement *s, double v) {
    if (isnan(v) || isinf(v)) return put(s, "null", 4);
    int rc;
    if (put_short_real(s, v, &rc)) return rc;
    Py_ssize_t start = s->len;
    if (put_real(s, v) < 0) return -1;
    char *text = s->buf + start;
    Py_ssize_t n = s->len - start;
    char *e = memchr(text, 'e', n);
    if (e == NULL) return 0;
    char mantissa[32], exponent[8];
    Py_ssize_t mlen = e - text, elen = n - mlen - 1;
    if (mlen >= (Py_ssize_t)sizeof mantissa || elen >= (Py_ssize_t)sizeof exponent) return 0;
    memcpy(mantissa, text, mlen);
    memcpy(exponent, e + 1, elen);
    exponent[elen] = '\0';
    int power = atoi(exponent);
    s->len = start;
    if (power == -5) {
        int negative = mantissa[0] == '-';
        if (put(s, negative ? "-0.0000" : "0.0000", negative ? 7 : 6) < 0) return -1;
        for (Py_ssize_t i = negative; i < mlen; i++)
            if (mantissa[i] != '.' && put(s, &mantissa[i], 1) < 0) return -1;
        return 0;
    }
    char written[48];
    int len = snprintf(written, sizeof written, "%.*se%c%d", (int)mlen, mantissa, power < 0 ? '-' : '+',
                       power < 0 ? -power : power);
    return put(s, written, len);
}

/* A cell the JSON writer leaves to Python: `cell(value)` returns its JSON text as bytes. */
static int put_json_called(Statement *s, PyObject *cell, PyObject *value) {
    if (value == NULL) return -1;
    PyObject *written = PyObject_CallOneArg(cell, value);
    Py_DECREF(value);
    if (written == NULL) return -1;
    if (!PyBytes_Check(written)) {
        Py_DECREF(written);
        PyErr_SetString(PyExc_TypeError, "json(): the cell callable must return bytes");
        return -1;
    }
    int rc = put(s, PyBytes_AS_STRING(written), PyBytes_GET_SIZE(written));
    Py_DECREF(written);
    return rc;
}

#define JSON_SAMPLE_ROWS 100

/* json(max_rows, int_bound, cell): (text, rows, more, firsts). The rows (up to max_rows, None: all) as
 * one JSON array; `more` says whether rows remain after them; `firsts` holds, per column, the value
 * the sqlite3 module gives for its first non-null cell among the first 100 rows (None when all null),
 * which is what the caller's type inference reads. An integer beyond +-int_bound (0: none) and a blob
 * are written by `cell`. */
static PyObject *Statement_json(Statement *s, PyObject *args) {
    PyObject *limit, *cell;
    long long bound;
    Py_ssize_t max_rows = -1;
    if (!PyArg_ParseTuple(args, "OLO", &limit, &bound, &cell)) return NULL;
    if (limit != Py_None && ((max_rows = PyLong_AsSsize_t(limit)) == -1 && PyErr_Occurred())) return NULL;
    PyObject *firsts = PyTuple_New(s->ncols);
    if (firsts == NULL) return NULL;
    for (int i = 0; i < s->ncols; i++) {
        Py_INCREF(Py_None);
        PyTuple_SET_ITEM(firsts, i, Py_None);
    }
    int unseen = s->ncols;
    Py_ssize_t rows = 0;
    s->len = 0;
    if (put(s, "[", 1) < 0) goto fail;
    while (s->state == STATE_ROW && (max_rows < 0 || rows < max_rows)) {
        if (put(s, rows ? ",[" : "[", rows ? 2 : 1) < 0) goto fail;
        for (int i = 0; i < s->ncols; i++) {
            if (i && put(s, ",", 1) < 0) goto fail;
            int type = sqlite3_column_type(s->st, i);
            if (unseen && rows < JSON_SAMPLE_ROWS && type != SQLITE_NULL && PyTuple_GET_ITEM(firsts, i) == Py_None) {
                PyObject *value = cell_object(s, i);
                if (value == NULL) goto fail;
                PyTuple_SET_ITEM(firsts, i, value);
                Py_DECREF(Py_None);
                unseen--;
            }
            int rc;
            switch (type) {
            case SQLITE_INTEGER: {
                sqlite3_int64 v = sqlite3_column_int64(s->st, i);
                rc = bound && (v > bound || v < -bound)
                    ? put_json_called(s, cell, PyLong_FromLongLong(v)) : put_int(s, v);
                break;
            }
            case SQLITE_FLOAT: rc = put_json_real(s, sqlite3_column_double(s->st, i)); break;
            case SQLITE_TEXT: rc = put_json_text(s, i); break;
            case SQLITE_BLOB: rc = put_json_called(s, cell, cell_object(s, i)); break;
            default: rc = put(s, "null", 4);
            }
            if (rc < 0) goto fail;
        }
        if (put(s, "]", 1) < 0 || step(s) < 0) goto fail;
        rows++;
    }
    if (put(s, "]", 1) < 0) goto fail;
    int more = s->state == STATE_ROW;
    if (!more) finalize(s);
    return Py_BuildValue("(y#nON)", s->buf, s->len, rows, more ? Py_True : Py_False, firsts);
fail:
    Py_DECREF(firsts);
    finalize(s);
    return NULL;
}

static PyObject *Statement_close(Statement *s, PyObject *Py_UNUSED(unused)) {
    finalize(s);
    Py_RETURN_NONE;
}

static PyMethodDef Statement_methods[] = {
    {"fetch", (PyCFunction)Statement_fetch, METH_O, "fetch(n): up to n rows as tuples; [] at the end."},
    {"layout", (PyCFunction)Statement_layout, METH_VARARGS, "layout(separator, quote_cr, kinds, calls)"},
    {"csv", (PyCFunction)Statement_csv, METH_VARARGS, "csv(max_bytes, max_rows) -> (text, rows, more)"},
    {"json", (PyCFunction)Statement_json, METH_VARARGS, "json(max_rows, int_bound, cell) -> (text, rows, more, firsts)"},
    {"iso_text", (PyCFunction)Statement_iso_text, METH_O, "iso_text(columns): their text cells read as ISO-8601."},
    {"close", (PyCFunction)Statement_close, METH_NOARGS, "Finalize the statement (idempotent)."},
    {NULL},
};

static PyGetSetDef Statement_getset[] = {
    {"columns", (getter)Statement_columns, NULL, "The result's column names.", NULL},
    {NULL},
};

static PyTypeObject StatementType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "drivers._sqlite_rows.Statement",
    .tp_doc = "Statement(connection, sql, params): prepared, bound and stepped to its first row.",
    .tp_basicsize = sizeof(Statement),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Statement_init,
    .tp_dealloc = (destructor)Statement_dealloc,
    .tp_methods = Statement_methods,
    .tp_getset = Statement_getset,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "drivers._sqlite_rows",
    "A SQLite statement read as tuples or as CSV text, on a sqlite3 module connection's handle.", -1,
    NULL, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__sqlite_rows(void) {
    PyObject *sqlite3_module = PyImport_ImportModule("sqlite3");
    if (sqlite3_module == NULL) return NULL;
    connection_type = (PyTypeObject *)PyObject_GetAttrString(sqlite3_module, "Connection");
    err_operational = PyObject_GetAttrString(sqlite3_module, "OperationalError");
    err_database = PyObject_GetAttrString(sqlite3_module, "DatabaseError");
    err_integrity = PyObject_GetAttrString(sqlite3_module, "IntegrityError");
    err_data = PyObject_GetAttrString(sqlite3_module, "DataError");
    err_internal = PyObject_GetAttrString(sqlite3_module, "InternalError");
    err_interface = PyObject_GetAttrString(sqlite3_module, "InterfaceError");
    err_programming = PyObject_GetAttrString(sqlite3_module, "ProgrammingError");
    Py_DECREF(sqlite3_module);
    if (!connection_type || !err_operational || !err_database || !err_integrity || !err_data || !err_internal
        || !err_interface || !err_programming)
        return NULL;
    if (!PyType_Check(connection_type)) {
        PyErr_SetString(PyExc_ImportError, "sqlite3.Connection is not a type");
        return NULL;
    }
    if (PyType_Ready(&StatementType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&StatementType);
    if (PyModule_AddObject(m, "Statement", (PyObject *)&StatementType) < 0
        || PyModule_AddStringConstant(m, "sqlite_version", sqlite3_libversion()) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
