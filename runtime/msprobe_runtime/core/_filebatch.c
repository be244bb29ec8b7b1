/* A batch of file operations in one call, with the GIL released for all of them. Capture and the gradient
 * probe write every step's files from a writer thread; a thread that takes the GIL back after every
 * system call (Python's os functions release it around each) keeps taking it from the training thread,
 * and each hand-over costs both threads a sleep and a wake-up. Here the writer takes it once per batch.
 *
 * Operations, run in order until the first failure:
 *   ("makedirs", path)               create the folder and any missing parents (existing ones are fine)
 *   ("mkdir", path)                  create the folder (it must not exist)
 *   ("new", path, mode, chunk, ...)  create the file (it must not exist) holding the bytes-like chunks
 *   ("rename", source, target)       rename (atomically replacing a file, or an empty folder)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef O_BINARY
#define O_BINARY 0
#endif
#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

enum { MAKEDIRS, MKDIR, NEW, RENAME };
static const char *const KINDS[] = {"makedirs", "mkdir", "new", "rename"};

typedef struct {
    int kind, mode;
    const char *path, *target;
    Py_ssize_t first_chunk, chunks;
} Op;

static int write_all(int fd, const char *data, Py_ssize_t size) {
    while (size > 0) {
        ssize_t done = write(fd, data, (size_t)size);
        if (done < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        data += done;
        size -= done;
    }
    return 0;
}

static int new_file(const Op *op, const Py_buffer *chunks) {
    int fd = open(op->path, O_WRONLY | O_CREAT | O_EXCL | O_BINARY | O_CLOEXEC, op->mode);
    if (fd < 0)
        return -1;
    for (Py_ssize_t c = op->first_chunk; c < op->first_chunk + op->chunks; c++)
        if (write_all(fd, chunks[c].buf, chunks[c].len) < 0) {
            int error = errno;
            close(fd);
            errno = error;
            return -1;
        }
    return close(fd);
}

static int makedirs(const char *path) {
    char buffer[4096];
    size_t length = strlen(path);
    if (length >= sizeof buffer) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(buffer, path, length + 1);
    for (size_t i = 1; i <= length; i++)
        if (buffer[i] == '/' || buffer[i] == '\0') {
            char kept = buffer[i];
            buffer[i] = '\0';
            if (mkdir(buffer, 0777) < 0 && errno != EEXIST)
                return -1;
            buffer[i] = kept;
        }
    struct stat info;
    if (stat(path, &info) < 0)
        return -1;
    if (!S_ISDIR(info.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

static int run_op(const Op *op, const Py_buffer *chunks) {
    switch (op->kind) {
    case MAKEDIRS:
        return makedirs(op->path);
    case MKDIR:
        return mkdir(op->path, 0777);
    case NEW:
        return new_file(op, chunks);
    default:
        return rename(op->path, op->target);
    }
}

/* fill `op` from the tuple `item`; paths go to `keep` (alive until the end), chunk buffers to `chunks` */
static int parse_op(PyObject *item, Op *op, PyObject *keep, Py_buffer *chunks, Py_ssize_t *used) {
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) < 2 || !PyUnicode_Check(PyTuple_GET_ITEM(item, 0))) {
        PyErr_SetString(PyExc_TypeError, "run: each operation is a tuple (kind, path, ...)");
        return -1;
    }
    const char *kind = PyUnicode_AsUTF8(PyTuple_GET_ITEM(item, 0));
    if (kind == NULL)
        return -1;
    op->kind = -1;
    for (int k = 0; k < 4; k++)
        if (strcmp(kind, KINDS[k]) == 0)
            op->kind = k;
    Py_ssize_t size = PyTuple_GET_SIZE(item);
    if (op->kind < 0 || (op->kind == RENAME && size != 3) || (op->kind == NEW && size < 3) ||
        (op->kind <= MKDIR && size != 2)) {
        PyErr_Format(PyExc_ValueError, "run: malformed operation '%s'", kind);
        return -1;
    }
    for (Py_ssize_t p = 1; p <= (op->kind == RENAME ? 2 : 1); p++) {
        PyObject *path = NULL;
        if (!PyUnicode_FSConverter(PyTuple_GET_ITEM(item, p), &path))
            return -1;
        int failed = PyList_Append(keep, path);
        Py_DECREF(path);
        if (failed)
            return -1;
        (p == 1 ? &op->path : &op->target)[0] = PyBytes_AS_STRING(path);
    }
    op->first_chunk = *used;
    op->chunks = 0;
    if (op->kind == NEW) {
        op->mode = PyLong_AsLong(PyTuple_GET_ITEM(item, 2));
        if (op->mode == -1 && PyErr_Occurred())
            return -1;
        for (Py_ssize_t c = 3; c < size; c++) {
            if (PyObject_GetBuffer(PyTuple_GET_ITEM(item, c), &chunks[*used], PyBUF_SIMPLE) < 0)
                return -1;
            (*used)++;
            op->chunks++;
        }
    }
    return 0;
}

PyDoc_STRVAR(run_doc,
             "run(operations)\n\n"
             "Run the file operations, tuples ('makedirs', path), ('mkdir', path), ('new', path, mode,\n"
             "chunk, ...) or ('rename', source, target), in order, with the GIL released; stop at the first\n"
             "failure and raise OSError naming its path (what ran before it stays done).");

static PyObject *run(PyObject *self, PyObject *args) {
    PyObject *ops_arg;
    if (!PyArg_ParseTuple(args, "O", &ops_arg))
        return NULL;
    PyObject *items = PySequence_Fast(ops_arg, "run: operations must be a sequence");
    if (items == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(items), total_chunks = 0, used = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(items, i);
        if (PyTuple_Check(item) && PyTuple_GET_SIZE(item) > 3)
            total_chunks += PyTuple_GET_SIZE(item) - 3;
    }
    PyObject *keep = PyList_New(0), *result = NULL;
    Op *ops = PyMem_Calloc((size_t)(n ? n : 1), sizeof *ops);
    Py_buffer *chunks = PyMem_Calloc((size_t)(total_chunks ? total_chunks : 1), sizeof *chunks);
    if (keep == NULL || ops == NULL || chunks == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (parse_op(PySequence_Fast_GET_ITEM(items, i), &ops[i], keep, chunks, &used) < 0)
            goto done;
    Py_ssize_t failed = -1;
    int error = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && failed < 0; i++)
        if (run_op(&ops[i], chunks) < 0) {
            failed = i;
            error = errno;
        }
    Py_END_ALLOW_THREADS
    if (failed >= 0) {
        PyObject *item = PySequence_Fast_GET_ITEM(items, failed);
        errno = error;
        if (ops[failed].kind == RENAME)
            PyErr_SetFromErrnoWithFilenameObjects(PyExc_OSError, PyTuple_GET_ITEM(item, 1), PyTuple_GET_ITEM(item, 2));
        else
            PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, PyTuple_GET_ITEM(item, 1));
        goto done;
    }
    result = Py_NewRef(Py_None);
done:
    for (Py_ssize_t c = 0; c < used; c++)
        PyBuffer_Release(&chunks[c]);
    PyMem_Free(chunks);
    PyMem_Free(ops);
    Py_XDECREF(keep);
    Py_DECREF(items);
    return result;
}

static PyMethodDef methods[] = {
    {"run", run, METH_VARARGS, run_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_filebatch",
                                    "A batch of file operations in one call, without the GIL.", -1, methods};

PyMODINIT_FUNC PyInit__filebatch(void) { return PyModule_Create(&module); }
