/* Many small new files in one call, with the GIL released for all of them: the gradient probe writes one
 * sign file per parameter every step from its writer thread, and a thread that takes the GIL back after
 * every system call keeps taking it from the training thread (each hand-over costs both threads a sleep
 * and a wake-up). Here the writer takes it once per step.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#ifndef O_BINARY
#define O_BINARY 0
#endif
#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

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

/* write file `path`: head, then body; on failure errno is set and -1 returned */
static int write_file(const char *path, int mode, const char *head, Py_ssize_t head_size, const char *body,
                      Py_ssize_t body_size) {
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_BINARY | O_CLOEXEC, mode);
    if (fd < 0)
        return -1;
    if (write_all(fd, head, head_size) < 0 || write_all(fd, body, body_size) < 0) {
        int error = errno;
        close(fd);
        errno = error;
        return -1;
    }
    return close(fd);
}

PyDoc_STRVAR(write_doc,
             "write(paths, heads, body, sizes, mode)\n\n"
             "Create each of the new files `paths` (str or bytes; an existing one is an error) with permission\n"
             "bits `mode`, holding its head (bytes) and then the next `sizes` bytes of the buffer `body`.\n"
             "Raises OSError naming the first file that failed; the files before it stay written.");

static PyObject *write_files(PyObject *self, PyObject *args) {
    PyObject *paths_arg, *heads_arg, *sizes_arg, *result = NULL;
    Py_buffer body;
    int mode;
    if (!PyArg_ParseTuple(args, "OOy*Oi", &paths_arg, &heads_arg, &body, &sizes_arg, &mode))
        return NULL;
    PyObject *paths = PySequence_Fast(paths_arg, "write: paths must be a sequence");
    PyObject *heads = PySequence_Fast(heads_arg, "write: heads must be a sequence");
    PyObject *sizes = PySequence_Fast(sizes_arg, "write: sizes must be a sequence");
    PyObject *encoded = NULL; /* the paths as bytes, kept alive while the GIL is released */
    const char **names = NULL, **head_data = NULL;
    Py_ssize_t *head_sizes = NULL, *body_sizes = NULL;
    if (paths == NULL || heads == NULL || sizes == NULL)
        goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(paths);
    if (PySequence_Fast_GET_SIZE(heads) != n || PySequence_Fast_GET_SIZE(sizes) != n) {
        PyErr_SetString(PyExc_ValueError, "write: paths, heads and sizes differ in length");
        goto done;
    }
    encoded = PyList_New(n);
    names = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *names);
    head_data = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *head_data);
    head_sizes = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *head_sizes);
    body_sizes = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *body_sizes);
    if (encoded == NULL || names == NULL || head_data == NULL || head_sizes == NULL || body_sizes == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *path = NULL;
        if (!PyUnicode_FSConverter(PySequence_Fast_GET_ITEM(paths, i), &path))
            goto done;
        PyList_SET_ITEM(encoded, i, path);
        names[i] = PyBytes_AS_STRING(path);
        PyObject *head = PySequence_Fast_GET_ITEM(heads, i);
        if (!PyBytes_Check(head)) {
            PyErr_SetString(PyExc_TypeError, "write: each head must be bytes");
            goto done;
        }
        head_data[i] = PyBytes_AS_STRING(head);
        head_sizes[i] = PyBytes_GET_SIZE(head);
        body_sizes[i] = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(sizes, i));
        if (body_sizes[i] == -1 && PyErr_Occurred())
            goto done;
        if (body_sizes[i] < 0) {
            PyErr_SetString(PyExc_ValueError, "write: negative size");
            goto done;
        }
        total += body_sizes[i];
    }
    if (total > body.len) {
        PyErr_SetString(PyExc_ValueError, "write: the sizes add up to more than the body holds");
        goto done;
    }
    Py_ssize_t failed = -1;
    int error = 0;
    Py_BEGIN_ALLOW_THREADS
    const char *data = body.buf;
    for (Py_ssize_t i = 0; i < n && failed < 0; i++) {
        if (write_file(names[i], mode, head_data[i], head_sizes[i], data, body_sizes[i]) < 0) {
            failed = i;
            error = errno;
        }
        data += body_sizes[i];
    }
    Py_END_ALLOW_THREADS
    if (failed >= 0) {
        errno = error;
        PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, PySequence_Fast_GET_ITEM(paths, failed));
        goto done;
    }
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(names);
    PyMem_Free(head_data);
    PyMem_Free(head_sizes);
    PyMem_Free(body_sizes);
    Py_XDECREF(encoded);
    Py_XDECREF(paths);
    Py_XDECREF(heads);
    Py_XDECREF(sizes);
    PyBuffer_Release(&body);
    return result;
}

static PyMethodDef methods[] = {
    {"write", write_files, METH_VARARGS, write_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_filebatch",
                                    "Many small new files in one call, without the GIL.", -1, methods};

PyMODINIT_FUNC PyInit__filebatch(void) { return PyModule_Create(&module); }
