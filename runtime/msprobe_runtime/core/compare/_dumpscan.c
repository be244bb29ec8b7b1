/* The compiled reader of dump.json records (table.py's `_Builder.add_batch`): a batch of records, read
 * straight from its JSON text into columns (record, suffix, state, dtype, shape, statistics, requires_grad,
 * hashes) without a Python object per tensor. It takes what our runtime and msprobe write: sections of
 * tensors and of int/float arguments, null arguments, keyword and parameter dicts, parameter gradients.
 * A batch with anything else (escaped strings, nested arguments, unusual values, bad JSON) is left whole
 * to the Python reader, which is the reference: tests/test_compare_scan.py checks that both read every
 * test dump into the same table. Other non-tensor arguments are handed back whole (`python_rows`).
 */
#define _GNU_SOURCE
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64
#define NUMBER_CHARS 64

enum { INPUT = 0, PARAMETERS = 1, OUTPUT = 2, PARAMETERS_GRAD = 3 }; /* table.py's row states */

static const char *SECTION_NAMES[] = {"input_args", "input_kwargs", "input", "parameters", "output"};
static const char *SECTION_PREFIXES[] = {".input", ".input", ".input", ".parameters", ".output"};
static const int SECTION_STATES[] = {INPUT, INPUT, INPUT, PARAMETERS, OUTPUT};
#define SECTIONS 5
#define POSITIONS 32

/* the keys of a leaf that the scanner reads; others are skipped */
static const char *FIELDS[] = {"type", "dtype", "shape", "Max", "Min", "Mean", "Norm", "requires_grad",
                               "md5", "hash", "data_name"};
#define FIELD_COUNT 11
#define TYPE_FIELD 0
#define DTYPE_FIELD 1
#define FIRST_OPTIONAL 8

typedef struct {
    const char *p, *end;
    int stop; /* set when the batch must be left to the Python reader */
} Cursor;

typedef struct { /* a few recent short strings (types, dtypes), reused instead of made again */
    const char *text[16];
    Py_ssize_t size[16];
    PyObject *object[16];
    int next;
} StringCache;

static locale_t c_locale; /* numbers are read with "." as the decimal point whatever the process locale */

static int peek(Cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\r' || *c->p == '\t'))
        c->p++;
    return c->p < c->end ? (unsigned char)*c->p : -1;
}

static int eat(Cursor *c, char ch) {
    if (peek(c) == ch) {
        c->p++;
        return 1;
    }
    c->stop = 1;
    return 0;
}

/* the bytes of a string without escapes (the cursor is at its quote) */
static int string_span(Cursor *c, const char **start, Py_ssize_t *size) {
    if (peek(c) != '"') {
        c->stop = 1;
        return 0;
    }
    const char *q = ++c->p;
    while (q < c->end && *q != '"') {
        if (*q == '\\' || (unsigned char)*q < 0x20) {
            c->stop = 1;
            return 0;
        }
        q++;
    }
    if (q >= c->end) {
        c->stop = 1;
        return 0;
    }
    *start = c->p;
    *size = q - c->p;
    c->p = q + 1;
    return 1;
}

static int span_is(const char *start, Py_ssize_t size, const char *word) {
    return size > 0 && *start == *word && (Py_ssize_t)strlen(word) == size && memcmp(start, word, size) == 0;
}

static PyObject *cached_string(StringCache *cache, const char *start, Py_ssize_t size) {
    for (int i = 0; i < 16; i++)
        if (cache->object[i] && cache->size[i] == size && memcmp(cache->text[i], start, size) == 0) {
            Py_INCREF(cache->object[i]);
            return cache->object[i];
        }
    PyObject *made = PyUnicode_DecodeUTF8(start, size, NULL);
    if (made == NULL || size > 64)
        return made;
    int slot = cache->next;
    cache->next = (slot + 1) % 16;
    Py_XDECREF(cache->object[slot]);
    Py_INCREF(made);
    cache->object[slot] = made;
    cache->text[slot] = start;
    cache->size[slot] = size;
    return made;
}

static void clear_cache(StringCache *cache) {
    for (int i = 0; i < 16; i++)
        Py_CLEAR(cache->object[i]);
}

/* the end of the JSON number at the cursor, as Python's json module reads numbers (NaN, Infinity and
 * -Infinity included); NULL when there is none. `*fraction`: it has a fraction or an exponent */
static const char *number_end(Cursor *c, int *fraction) {
    const char *s = c->p, *q = c->p;
    *fraction = 1;
    if (q < c->end && *q == '-')
        q++;
    if (c->end - q >= 8 && memcmp(q, "Infinity", 8) == 0)
        return q + 8;
    if (q == s && c->end - q >= 3 && memcmp(q, "NaN", 3) == 0)
        return q + 3;
    *fraction = 0;
    if (q >= c->end || *q < '0' || *q > '9')
        return NULL;
    if (*q == '0')
        q++;
    else
        while (q < c->end && *q >= '0' && *q <= '9')
            q++;
    if (q < c->end && *q == '.') {
        const char *digits = ++q;
        *fraction = 1;
        while (q < c->end && *q >= '0' && *q <= '9')
            q++;
        if (q == digits)
            return NULL;
    }
    if (q < c->end && (*q == 'e' || *q == 'E')) {
        *fraction = 1;
        q++;
        if (q < c->end && (*q == '+' || *q == '-'))
            q++;
        const char *digits = q;
        while (q < c->end && *q >= '0' && *q <= '9')
            q++;
        if (q == digits)
            return NULL;
    }
    return q;
}

/* the number at the cursor as Python's json reads it and float() converts it: its text (in `text`, of
 * NUMBER_CHARS), its value (an int "-0" is 0.0) and whether it has a fraction or exponent; 0: none there */
static int read_number(Cursor *c, char *text, double *value, int *fraction) {
    const char *start = c->p, *end = number_end(c, fraction);
    if (end == NULL || end - start >= NUMBER_CHARS) {
        c->stop = 1;
        return 0;
    }
    memcpy(text, start, end - start);
    text[end - start] = 0;
    c->p = end;
    if (text[0] == 'N')
        *value = Py_NAN;
    else if (text[text[0] == '-'] == 'I')
        *value = text[0] == '-' ? -Py_HUGE_VAL : Py_HUGE_VAL;
    else /* correctly rounded, as float() reads it; an int goes through Python's int first */
        *value = strtod_l(text, NULL, c_locale) + (*fraction ? -0.0 : 0.0);
    return 1;
}

/* a JSON number as Python's json module reads it: an int without fraction or exponent, else a float */
static PyObject *number(Cursor *c) {
    char text[NUMBER_CHARS];
    double value;
    int fraction;
    if (!read_number(c, text, &value, &fraction))
        return NULL;
    return fraction ? PyFloat_FromDouble(value) : PyLong_FromString(text, NULL, 10);
}

static int literal(Cursor *c, const char *word) {
    size_t size = strlen(word);
    if ((size_t)(c->end - c->p) >= size && memcmp(c->p, word, size) == 0) {
        c->p += size;
        return 1;
    }
    c->stop = 1;
    return 0;
}

/* any JSON value as a new Python object (NULL: stopped, or a Python error is set) */
static PyObject *value(Cursor *c, StringCache *cache, int depth) {
    int next = peek(c);
    if (depth > MAX_DEPTH) {
        c->stop = 1;
        return NULL;
    }
    if (next == '"') {
        const char *start;
        Py_ssize_t size;
        return string_span(c, &start, &size) ? cached_string(cache, start, size) : NULL;
    }
    if (next == '{') {
        c->p++;
        PyObject *dict = PyDict_New();
        if (dict == NULL)
            return NULL;
        if (peek(c) == '}') {
            c->p++;
            return dict;
        }
        for (;;) {
            const char *start;
            Py_ssize_t size;
            PyObject *key, *item;
            if (!string_span(c, &start, &size) || !eat(c, ':'))
                break;
            if ((key = PyUnicode_DecodeUTF8(start, size, NULL)) == NULL)
                break;
            item = value(c, cache, depth + 1);
            if (item == NULL || PyDict_SetItem(dict, key, item) < 0) {
                Py_DECREF(key);
                Py_XDECREF(item);
                break;
            }
            Py_DECREF(key);
            Py_DECREF(item);
            if (peek(c) == ',') {
                c->p++;
                continue;
            }
            if (eat(c, '}'))
                return dict;
            break;
        }
        Py_DECREF(dict);
        return NULL;
    }
    if (next == '[') {
        c->p++;
        PyObject *list = PyList_New(0);
        if (list == NULL)
            return NULL;
        if (peek(c) == ']') {
            c->p++;
            return list;
        }
        for (;;) {
            PyObject *item = value(c, cache, depth + 1);
            if (item == NULL || PyList_Append(list, item) < 0) {
                Py_XDECREF(item);
                break;
            }
            Py_DECREF(item);
            if (peek(c) == ',') {
                c->p++;
                continue;
            }
            if (eat(c, ']'))
                return list;
            break;
        }
        Py_DECREF(list);
        return NULL;
    }
    if (next == 't')
        return literal(c, "true") ? Py_NewRef(Py_True) : NULL;
    if (next == 'f')
        return literal(c, "false") ? Py_NewRef(Py_False) : NULL;
    if (next == 'n')
        return literal(c, "null") ? Py_NewRef(Py_None) : NULL;
    return number(c);
}

/* skip a JSON value without making objects; 0 when it is not valid */
static int skip(Cursor *c, int depth) {
    int next = peek(c);
    if (depth > MAX_DEPTH) {
        c->stop = 1;
        return 0;
    }
    if (next == '"') {
        const char *start;
        Py_ssize_t size;
        return string_span(c, &start, &size);
    }
    if (next == '{' || next == '[') {
        char close = next == '{' ? '}' : ']';
        c->p++;
        if (peek(c) == close) {
            c->p++;
            return 1;
        }
        for (;;) {
            if (next == '{') {
                const char *start;
                Py_ssize_t size;
                if (!string_span(c, &start, &size) || !eat(c, ':'))
                    return 0;
            }
            if (!skip(c, depth + 1))
                return 0;
            if (peek(c) == ',') {
                c->p++;
                continue;
            }
            return eat(c, close);
        }
    }
    if (next == 't')
        return literal(c, "true");
    if (next == 'f')
        return literal(c, "false");
    if (next == 'n')
        return literal(c, "null");
    int fraction;
    const char *after = number_end(c, &fraction);
    if (after == NULL) {
        c->stop = 1;
        return 0;
    }
    c->p = after;
    return 1;
}


/* ---- growable columns -------------------------------------------------------------------------- */

typedef struct {
    char *data;
    Py_ssize_t size, capacity;
} Buffer;

static int put(Buffer *b, const void *item, Py_ssize_t size) {
    if (b->size + size > b->capacity) {
        Py_ssize_t capacity = b->capacity ? b->capacity * 2 : 1 << 16;
        while (capacity < b->size + size)
            capacity *= 2;
        char *grown = PyMem_Realloc(b->data, capacity);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        b->data = grown;
        b->capacity = capacity;
    }
    memcpy(b->data + b->size, item, size);
    b->size += size;
    return 0;
}

/* distinct texts (dtypes, shapes, suffixes) numbered in order of first appearance */
#define RECENT 4
typedef struct {
    PyObject *ids;   /* bytes -> int */
    PyObject *texts; /* list of str */
    char recent[RECENT][128]; /* the last texts looked up, and their ids */
    Py_ssize_t recent_size[RECENT];
    int recent_id[RECENT], next;
} Texts;

static int text_id(Texts *t, const char *start, Py_ssize_t size) {
    for (int i = 0; i < RECENT; i++)
        if (size == t->recent_size[i] && memcmp(start, t->recent[i], size) == 0)
            return t->recent_id[i];
    PyObject *key = PyBytes_FromStringAndSize(start, size);
    if (key == NULL)
        return -2;
    PyObject *found = PyDict_GetItemWithError(t->ids, key);
    int id;
    if (found != NULL)
        id = (int)PyLong_AsLong(found);
    else if (PyErr_Occurred()) {
        Py_DECREF(key);
        return -2;
    } else {
        id = (int)PyList_GET_SIZE(t->texts);
        PyObject *text = PyUnicode_DecodeUTF8(start, size, NULL);
        PyObject *number = PyLong_FromLong(id);
        if (text == NULL || number == NULL || PyList_Append(t->texts, text) < 0 || PyDict_SetItem(t->ids, key, number) < 0) {
            Py_XDECREF(text);
            Py_XDECREF(number);
            Py_DECREF(key);
            return -2;
        }
        Py_DECREF(text);
        Py_DECREF(number);
    }
    Py_DECREF(key);
    if (size <= 128) {
        int slot = t->next;
        t->next = (slot + 1) % RECENT;
        memcpy(t->recent[slot], start, size);
        t->recent_size[slot] = size;
        t->recent_id[slot] = id;
    }
    return id;
}

enum { NUMBER = 0, NULL_CELL = 1, TEXT_CELL = 2 };

typedef struct {
    Buffer record, suffix, state, tensor, dtype, shape, stats, kinds, grad;
    PyObject *md5, *hash, *data_name, *digest; /* per row: str or None */
    PyObject *texts, *python_rows, *names;     /* (row, column, text); (row, leaf dict); record names */
    PyObject *seen;                            /* the record names, as a set (a repeated name: Python's) */
    Texts dtypes, shapes, suffixes;
    int present[FIELD_COUNT]; /* optional keys some tensor has */
    Py_ssize_t rows;
    int na_dtype, na_shape;
    int position_ids[SECTIONS][POSITIONS]; /* suffix ids of `{prefix}.{position}` of each section, 0: not yet */
    StringCache cache;
} Scan;

typedef struct { /* one row before it is appended */
    int32_t suffix;
    int8_t state, tensor, grad, kinds[4];
    int32_t dtype, shape;
    double stats[4];
    PyObject *md5, *hash, *data_name, *digest; /* borrowed or NULL (None) */
} Row;

static int append_object(PyObject *list, PyObject *item) {
    return PyList_Append(list, item ? item : Py_None);
}

static int add_row(Scan *s, int32_t record, Row *row) {
    if (put(&s->record, &record, 4) < 0 || put(&s->suffix, &row->suffix, 4) < 0 || put(&s->state, &row->state, 1) < 0 ||
        put(&s->tensor, &row->tensor, 1) < 0 || put(&s->dtype, &row->dtype, 4) < 0 || put(&s->shape, &row->shape, 4) < 0 ||
        put(&s->stats, row->stats, 32) < 0 || put(&s->kinds, row->kinds, 4) < 0 || put(&s->grad, &row->grad, 1) < 0 ||
        append_object(s->md5, row->md5) < 0 || append_object(s->hash, row->hash) < 0 ||
        append_object(s->data_name, row->data_name) < 0 || append_object(s->digest, row->digest) < 0)
        return -1;
    s->rows++;
    return 0;
}

static void null_row(Row *row, int32_t suffix, int8_t state) {
    memset(row, 0, sizeof(Row));
    row->suffix = suffix;
    row->state = state;
    row->grad = -1;
    row->dtype = row->shape = -1;
    for (int i = 0; i < 4; i++) {
        row->stats[i] = Py_NAN;
        row->kinds[i] = NULL_CELL;
    }
}

/* ---- CRC-32 (zlib's), for the digest of a number argument ---------------------------------------- */

static uint32_t CRC_TABLE[256];

static void crc_init(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        CRC_TABLE[n] = c;
    }
}

static PyObject *crc_text(const char *text, Py_ssize_t size) {
    uint32_t c = 0xFFFFFFFFu;
    for (Py_ssize_t i = 0; i < size; i++)
        c = CRC_TABLE[(c ^ (unsigned char)text[i]) & 0xFF] ^ (c >> 8);
    return PyUnicode_FromFormat("%08x", c ^ 0xFFFFFFFFu);
}

/* ---- values of a leaf ----------------------------------------------------------------------------- */

/* a statistic: number, NaN/Infinity, null, bool (as msprobe's Python reader reads it: 1.0/0.0), or text */
static int statistic(Cursor *c, Row *row, int column, PyObject **text) {
    int next = peek(c);
    if (next == 'n') {
        if (!literal(c, "null"))
            return 0;
        row->stats[column] = Py_NAN;
        row->kinds[column] = NULL_CELL;
    } else if (next == 't' || next == 'f') {
        if (!literal(c, next == 't' ? "true" : "false"))
            return 0;
        row->stats[column] = next == 't' ? 1.0 : 0.0;
        row->kinds[column] = NUMBER;
    } else if (next == '"') {
        const char *start;
        Py_ssize_t size;
        if (!string_span(c, &start, &size))
            return 0;
        Py_XSETREF(*text, PyUnicode_DecodeUTF8(start, size, NULL));
        if (*text == NULL)
            return -1;
        row->stats[column] = Py_NAN;
        row->kinds[column] = TEXT_CELL;
    } else {
        char digits[NUMBER_CHARS];
        int fraction;
        if (!read_number(c, digits, &row->stats[column], &fraction))
            return 0;
        row->kinds[column] = NUMBER;
    }
    return 1;
}

/* a shape: a list of ints, spelled as Python prints a list ("[8, 16, 64]"); null is "None" */
static int shape(Cursor *c, Scan *s, Row *row) {
    char text[256];
    Py_ssize_t size = 0;
    if (peek(c) == 'n') {
        if (!literal(c, "null"))
            return 0;
        row->shape = text_id(&s->shapes, "None", 4);
        return row->shape == -2 ? -1 : 1;
    }
    if (!eat(c, '['))
        return 0;
    text[size++] = '[';
    if (peek(c) == ']')
        c->p++;
    else
        for (;;) {
            int fraction;
            peek(c);
            const char *start = c->p, *end = number_end(c, &fraction);
            if (end == NULL || fraction || (end - start == 2 && start[0] == '-' && start[1] == '0') ||
                size + (end - start) + 3 > (Py_ssize_t)sizeof(text)) {
                c->stop = 1;
                return 0;
            }
            if (size > 1) {
                text[size++] = ',';
                text[size++] = ' ';
            }
            memcpy(text + size, start, end - start);
            size += end - start;
            c->p = end;
            if (peek(c) == ',') {
                c->p++;
                continue;
            }
            if (!eat(c, ']'))
                return 0;
            break;
        }
    text[size++] = ']';
    row->shape = text_id(&s->shapes, text, size);
    return row->shape == -2 ? -1 : 1;
}

/* a string or null (md5, hash, data_name, dtype); 0 for anything else */
static int text_or_null(Cursor *c, const char **start, Py_ssize_t *size) {
    if (peek(c) == 'n') {
        *start = NULL;
        return literal(c, "null");
    }
    return string_span(c, start, size);
}

/* ---- arguments ------------------------------------------------------------------------------------ */

static int add_null(Scan *s, int32_t record, int32_t suffix, int8_t state) {
    Row row;
    null_row(&row, suffix, state);
    row.dtype = s->na_dtype;
    row.shape = s->na_shape;
    return add_row(s, record, &row);
}

/* a number argument ({"type": "int", "value": 3}): its value is its statistics, its digest the CRC-32 of
 * Python's str() of the value (the JSON text of an int, the repr of a float) */
static int add_number(Scan *s, int32_t record, Row *row, const char *dtype, const char *digits, double value,
                      int fraction) {
    PyObject *digest;
    if (fraction) {
        char *text = PyOS_double_to_string(value, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
        if (text == NULL)
            return -1;
        digest = crc_text(text, (Py_ssize_t)strlen(text));
        PyMem_Free(text);
    } else {
        digest = crc_text(digits, (Py_ssize_t)strlen(digits));
    }
    if (digest == NULL)
        return -1;
    row->dtype = text_id(&s->dtypes, dtype, (Py_ssize_t)strlen(dtype));
    row->shape = text_id(&s->shapes, "[]", 2);
    for (int i = 0; i < 4; i++) {
        row->stats[i] = value;
        row->kinds[i] = NUMBER;
    }
    row->digest = digest;
    int result = row->dtype == -2 || row->shape == -2 ? -1 : add_row(s, record, row);
    Py_DECREF(digest);
    return result;
}

/* one argument: a tensor, a number argument, another leaf (for Python), null, or nothing (a bare value);
 * -1: a Python error; the cursor's stop flag: leave the batch to Python */
static int add_argument(Cursor *c, Scan *s, int32_t record, int32_t suffix, int8_t state) {
    int next = peek(c);
    if (next == 'n')
        return literal(c, "null") ? add_null(s, record, suffix, state) : 0;
    if (next == '[') {
        c->stop = 1;
        return 0;
    }
    if (next != '{') { /* a bare value: no row */
        skip(c, 1);
        return 0;
    }
    const char *leaf_start = c->p, *type = NULL, *value_start = NULL;
    Py_ssize_t type_size = 0;
    PyObject *texts[4] = {NULL}, *objects[3] = {NULL};
    int present[FIELD_COUNT] = {0}, result = 0;
    Row row;
    null_row(&row, suffix, state);
    c->p++;
    if (peek(c) == '}')
        c->p++;
    else
        for (;;) {
            const char *start;
            Py_ssize_t size;
            int field = -1, ok = 1;
            if (!string_span(c, &start, &size) || !eat(c, ':'))
                goto done;
            for (int i = 0; i < FIELD_COUNT; i++)
                if (span_is(start, size, FIELDS[i]))
                    field = i;
            if (field >= 0)
                present[field] = 1;
            if (field == TYPE_FIELD) {
                if (peek(c) != '"') { /* not a leaf: Python walks it */
                    c->stop = 1;
                    goto done;
                }
                ok = string_span(c, &type, &type_size);
            } else if (field == DTYPE_FIELD) {
                ok = text_or_null(c, &start, &size);
                if (ok && start != NULL && (row.dtype = text_id(&s->dtypes, start, size)) == -2)
                    goto fail;
            } else if (field == 2) {
                ok = shape(c, s, &row);
            } else if (field >= 3 && field <= 6) {
                ok = statistic(c, &row, field - 3, &texts[field - 3]);
            } else if (field == 7) {
                ok = peek(c) == 't' ? literal(c, "true") : peek(c) == 'f' ? literal(c, "false") : literal(c, "null");
                row.grad = c->p[-1] == 'e' ? (c->p[-2] == 'u') : -1; /* true, false, null */
            } else if (field >= FIRST_OPTIONAL) {
                ok = text_or_null(c, &start, &size);
                if (ok && start != NULL) {
                    Py_XSETREF(objects[field - FIRST_OPTIONAL], PyUnicode_DecodeUTF8(start, size, NULL));
                    if (objects[field - FIRST_OPTIONAL] == NULL)
                        goto fail;
                }
            } else {
                if (span_is(start, size, "value"))
                    value_start = c->p;
                ok = skip(c, 2);
            }
            if (ok < 0)
                goto fail;
            if (!ok || c->stop) {
                c->stop = 1;
                goto done;
            }
            if (peek(c) == ',') {
                c->p++;
                continue;
            }
            if (!eat(c, '}'))
                goto done;
            break;
        }
    if (type == NULL) { /* a dict of arguments, not a leaf */
        c->stop = 1;
        goto done;
    }
    if (present[DTYPE_FIELD]) { /* a tensor */
        row.tensor = 1;
        if (!present[2])
            row.shape = text_id(&s->shapes, "None", 4);
        row.md5 = objects[0];
        row.hash = objects[1];
        row.data_name = objects[2];
        for (int i = FIRST_OPTIONAL; i < FIELD_COUNT; i++)
            s->present[i] |= present[i];
        for (int i = 0; i < 4; i++)
            if (texts[i]) {
                PyObject *entry = Py_BuildValue("(niO)", s->rows, i, texts[i]);
                if (entry == NULL || PyList_Append(s->texts, entry) < 0) {
                    Py_XDECREF(entry);
                    goto fail;
                }
                Py_DECREF(entry);
            }
        result = add_row(s, record, &row);
        goto done;
    }
    row.grad = -1; /* not a tensor: requires_grad is not read */
    int is_int = span_is(type, type_size, "int");
    if (value_start != NULL && (is_int || span_is(type, type_size, "float"))) {
        Cursor v = {value_start, c->end, 0};
        int next = peek(&v), fraction;
        char digits[NUMBER_CHARS];
        double number;
        if ((next == '-' || (next >= '0' && next <= '9')) && read_number(&v, digits, &number, &fraction) &&
            strcmp(digits, "-0") != 0) {
            result = add_number(s, record, &row, is_int ? "<class 'int'>" : "<class 'float'>", digits, number, fraction);
            goto done;
        }
    }
    /* another argument: Python describes it from its whole dict */
    const char *after = c->p;
    c->p = leaf_start;
    PyObject *whole = value(c, &s->cache, 1);
    c->p = after;
    if (whole == NULL)
        goto fail;
    PyObject *entry = Py_BuildValue("(nN)", s->rows, whole);
    if (entry == NULL || PyList_Append(s->python_rows, entry) < 0) {
        Py_XDECREF(entry);
        goto fail;
    }
    Py_DECREF(entry);
    result = add_row(s, record, &row);
    goto done;
fail:
    result = -1;
done:
    for (int i = 0; i < 4; i++)
        Py_XDECREF(texts[i]);
    for (int i = 0; i < 3; i++)
        Py_XDECREF(objects[i]);
    return PyErr_Occurred() ? -1 : result;
}

/* ---- sections and records -------------------------------------------------------------------------- */

static int suffix_id(Scan *s, const char *prefix, const char *tail, Py_ssize_t tail_size) {
    char text[512];
    Py_ssize_t size = (Py_ssize_t)strlen(prefix);
    if (size + 1 + tail_size > (Py_ssize_t)sizeof(text))
        return -3;
    memcpy(text, prefix, size);
    if (tail != NULL) {
        text[size++] = '.';
        memcpy(text + size, tail, tail_size);
        size += tail_size;
    }
    return text_id(&s->suffixes, text, size);
}

static int position_id(Scan *s, const char *base, int section, int position) {
    if (section >= 0 && position < POSITIONS && s->position_ids[section][position])
        return s->position_ids[section][position] - 1;
    char digits[24];
    int size = 0;
    for (int rest = position; size == 0 || rest > 0; rest /= 10)
        digits[size++] = (char)('0' + rest % 10);
    for (int i = 0; i < size / 2; i++) {
        char swap = digits[i];
        digits[i] = digits[size - 1 - i];
        digits[size - 1 - i] = swap;
    }
    int id = suffix_id(s, base, digits, size);
    if (id >= 0 && section >= 0 && position < POSITIONS)
        s->position_ids[section][position] = id + 1;
    return id;
}

/* the argument at the cursor under suffix `id` (from suffix_id/position_id: -3 leaves the batch to
 * Python, another negative value is an error) */
static int add_with_id(Cursor *c, Scan *s, int32_t record, int id, int8_t state) {
    if (id == -3) {
        c->stop = 1;
        return 0;
    }
    return id < 0 || add_argument(c, s, record, id, state) < 0 ? -1 : 0;
}

/* a list of arguments at suffix `base` (a section's, or -1): item i at `base.i`, or every item at `base`
 * itself for gradients */
static int add_list(Cursor *c, Scan *s, int32_t record, const char *base, int section, int8_t state, int gradients) {
    if (!eat(c, '['))
        return 0;
    if (peek(c) == ']') {
        c->p++;
        return 0;
    }
    for (int position = 0;; position++) {
        int id = gradients ? suffix_id(s, base, NULL, 0) : position_id(s, base, section, position);
        if (add_with_id(c, s, record, id, state) < 0)
            return -1;
        if (c->stop)
            return 0;
        if (peek(c) == ',') {
            c->p++;
            continue;
        }
        eat(c, ']');
        return 0;
    }
}

/* a dict of named arguments (keyword arguments, parameters, a record of parameter gradients) */
static int add_named(Cursor *c, Scan *s, int32_t record, const char *prefix, int8_t state) {
    if (!eat(c, '{'))
        return 0;
    if (peek(c) == '}') {
        c->p++;
        return 0;
    }
    for (;;) {
        const char *start;
        Py_ssize_t size;
        if (!string_span(c, &start, &size) || !eat(c, ':'))
            return 0;
        if (span_is(start, size, "type")) { /* the dict may be a leaf itself: Python decides */
            c->stop = 1;
            return 0;
        }
        if (peek(c) == '[') { /* a list of arguments under a name */
            char base[512];
            Py_ssize_t length = (Py_ssize_t)strlen(prefix);
            if (length + 1 + size >= (Py_ssize_t)sizeof(base)) {
                c->stop = 1;
                return 0;
            }
            memcpy(base, prefix, length);
            base[length] = '.';
            memcpy(base + length + 1, start, size);
            base[length + 1 + size] = 0;
            if (add_list(c, s, record, base, -1, state, state == PARAMETERS_GRAD) < 0)
                return -1;
        } else if (add_with_id(c, s, record, suffix_id(s, prefix, start, size), state) < 0) {
            return -1;
        }
        if (c->stop)
            return 0;
        if (peek(c) == ',') {
            c->p++;
            continue;
        }
        eat(c, '}');
        return 0;
    }
}

static int add_section(Cursor *c, Scan *s, int32_t record, int section) {
    const char *prefix = SECTION_PREFIXES[section];
    int8_t state = (int8_t)SECTION_STATES[section];
    int next = peek(c);
    if (next == 'n') {
        if (!literal(c, "null"))
            return 0;
        int id = suffix_id(s, prefix, NULL, 0);
        return id < 0 ? -1 : add_null(s, record, id, state);
    }
    if (next == '{')
        return add_named(c, s, record, prefix, state);
    if (next != '[') { /* a bare value: no rows */
        skip(c, 1);
        return 0;
    }
    return add_list(c, s, record, prefix, section, state, 0);
}

/* whether one of the record name's last two dotted parts is "parameters_grad" (as table.py decides) */
static int gradient_record(const char *name, Py_ssize_t size) {
    Py_ssize_t end = size;
    for (int part = 0; part < 2 && end >= 0; part++) {
        Py_ssize_t start = end;
        while (start > 0 && name[start - 1] != '.')
            start--;
        if (span_is(name + start, end - start, "parameters_grad"))
            return 1;
        end = start - 1;
    }
    return 0;
}

/* one record "name": {...}; -1: a Python error; the cursor's stop flag: leave the batch to Python */
static int add_record(Cursor *c, Scan *s) {
    const char *name_start, *sections[SECTIONS] = {NULL};
    Py_ssize_t name_size;
    if (!string_span(c, &name_start, &name_size) || !eat(c, ':'))
        return 0;
    int32_t record = (int32_t)PyList_GET_SIZE(s->names);
    PyObject *name = PyUnicode_DecodeUTF8(name_start, name_size, NULL);
    int repeated = name ? PySet_Contains(s->seen, name) : -1;
    if (repeated == 1) { /* a JSON object keeps the last of repeated keys: Python decides */
        Py_DECREF(name);
        c->stop = 1;
        return 0;
    }
    if (repeated < 0 || PySet_Add(s->seen, name) < 0 || PyList_Append(s->names, name) < 0) {
        Py_XDECREF(name);
        return -1;
    }
    Py_DECREF(name);
    if (gradient_record(name_start, name_size))
        return add_named(c, s, record, "", PARAMETERS_GRAD);
    if (!eat(c, '{'))
        return 0;
    if (peek(c) != '}')
        for (;;) {
            const char *start;
            Py_ssize_t size;
            if (!string_span(c, &start, &size) || !eat(c, ':'))
                return 0;
            for (int i = 0; i < SECTIONS; i++)
                if (span_is(start, size, SECTION_NAMES[i]))
                    sections[i] = c->p;
            if (!skip(c, 1))
                return 0;
            if (peek(c) == ',') {
                c->p++;
                continue;
            }
            if (!eat(c, '}'))
                return 0;
            break;
        }
    else
        c->p++;
    const char *after = c->p;
    for (int i = 0; i < SECTIONS && !c->stop; i++) {
        if (sections[i] == NULL)
            continue;
        c->p = sections[i];
        if (add_section(c, s, record, i) < 0)
            return -1;
    }
    c->p = after;
    return 0;
}

static PyObject *column(Buffer *b) {
    return PyBytes_FromStringAndSize(b->data ? b->data : "", b->size);
}

static void release(Scan *s) {
    Buffer *buffers[] = {&s->record, &s->suffix, &s->state, &s->tensor, &s->dtype, &s->shape, &s->stats, &s->kinds,
                         &s->grad};
    for (size_t i = 0; i < sizeof(buffers) / sizeof(buffers[0]); i++)
        PyMem_Free(buffers[i]->data);
    PyObject *objects[] = {s->md5, s->hash, s->data_name, s->digest, s->texts, s->python_rows, s->names, s->seen,
                           s->dtypes.ids, s->dtypes.texts, s->shapes.ids, s->shapes.texts, s->suffixes.ids,
                           s->suffixes.texts};
    for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++)
        Py_XDECREF(objects[i]);
    clear_cache(&s->cache);
}

static PyObject *scan(PyObject *Py_UNUSED(module), PyObject *args) {
    Py_buffer text;
    if (!PyArg_ParseTuple(args, "y*", &text))
        return NULL;
    Scan s;
    memset(&s, 0, sizeof(s));
    PyObject **lists[] = {&s.md5, &s.hash, &s.data_name, &s.digest, &s.texts, &s.python_rows, &s.names,
                          &s.dtypes.texts, &s.shapes.texts, &s.suffixes.texts};
    PyObject *result = NULL;
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
        if ((*lists[i] = PyList_New(0)) == NULL)
            goto out;
    if ((s.seen = PySet_New(NULL)) == NULL || (s.dtypes.ids = PyDict_New()) == NULL || (s.shapes.ids = PyDict_New()) == NULL ||
        (s.suffixes.ids = PyDict_New()) == NULL)
        goto out;
    for (int i = 0; i < RECENT; i++)
        s.dtypes.recent_size[i] = s.shapes.recent_size[i] = s.suffixes.recent_size[i] = -1;
    if ((s.na_dtype = text_id(&s.dtypes, "N/A", 3)) < 0 || (s.na_shape = text_id(&s.shapes, "N/A", 3)) < 0)
        goto out;
    Cursor c = {(const char *)text.buf, (const char *)text.buf + text.len, 0};
    while (peek(&c) != -1) {
        if (add_record(&c, &s) < 0)
            goto out;
        if (c.stop)
            break;
        if (peek(&c) == ',')
            c.p++;
        else if (peek(&c) != -1)
            c.stop = 1;
        if (c.stop)
            break;
    }
    if (c.stop) { /* left to the Python reader */
        result = Py_NewRef(Py_None);
        goto out;
    }
    PyObject *present = Py_BuildValue("(OOO)", s.present[FIRST_OPTIONAL] ? Py_True : Py_False,
                                      s.present[FIRST_OPTIONAL + 1] ? Py_True : Py_False,
                                      s.present[FIRST_OPTIONAL + 2] ? Py_True : Py_False);
    result = Py_BuildValue(
        "{s:O,s:n,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:N}",
        "names", s.names, "rows", s.rows, "record", column(&s.record), "suffix", column(&s.suffix),
        "state", column(&s.state), "tensor", column(&s.tensor), "dtype", column(&s.dtype), "shape", column(&s.shape),
        "stats", column(&s.stats), "kinds", column(&s.kinds), "requires_grad", column(&s.grad), "md5", s.md5,
        "hash", s.hash, "data_name", s.data_name, "digest", s.digest, "texts", s.texts, "python_rows",
        s.python_rows, "dtypes", s.dtypes.texts, "shapes", s.shapes.texts, "suffixes", s.suffixes.texts,
        "present", present);
out:
    release(&s);
    PyBuffer_Release(&text);
    return result;
}

static PyMethodDef METHODS[] = {
    {"scan", scan, METH_VARARGS,
     "scan(text) -> dict of columns of the records in text (\"name\": {...}, ...), or None when the batch is "
     "left to the Python reader"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_dumpscan",
                                    "Compiled reading of dump.json records (see table.py)", -1, METHODS,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__dumpscan(void) {
    c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (c_locale == (locale_t)0)
        return PyErr_NoMemory();
    crc_init();
    return PyModule_Create(&MODULE);
}
