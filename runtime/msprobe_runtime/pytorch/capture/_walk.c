/* capture.backward._edges_into in C: at L0 and mix every module call walks the autograd nodes it made, and
 * in Python the loop's attribute reads, method calls and dict lookups cost more than the rest of a small
 * module's backward record.
 *
 * edges_into(computed, leaves, roots, first_sequence, walk, walks, accumulate_grad) follows the Python
 * function step for step (same arguments, `edges` split in two, plus AccumulateGrad's type) and returns the
 * same (found, exits); backward.py keeps the Python function as the reference and the fallback.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *str_sequence_nr, *str_next_functions, *str_variable;

/* node._sequence_nr() >= first: 1, 0, or -1 on error */
static int made_since(PyObject *node, long long first) {
    PyObject *number = PyObject_CallMethodNoArgs(node, str_sequence_nr);
    if (number == NULL)
        return -1;
    long long value = PyLong_AsLongLong(number);
    Py_DECREF(number);
    if (value == -1 && PyErr_Occurred())
        return -1;
    return value >= first;
}

/* The input indices an edge leads to (borrowed; NULL with no error: none). `*walked_into` is set when the
 * child is a node made during the call, pushed onto `todo` the first time it is seen. */
static PyObject *edge_indices(PyObject *pair, PyObject *child, PyObject *computed, PyObject *leaves,
                              PyObject *accumulate_grad, PyObject *inside, PyObject *todo, long long first,
                              int *walked_into) {
    *walked_into = 0;
    if ((PyObject *)Py_TYPE(child) == accumulate_grad) { /* a leaf's node: nothing below it */
        if (PyDict_GET_SIZE(leaves) == 0)
            return NULL;
        PyObject *variable = PyObject_GetAttr(child, str_variable);
        if (variable == NULL)
            return NULL;
        PyObject *key = PyLong_FromVoidPtr(variable);
        Py_DECREF(variable);
        if (key == NULL)
            return NULL;
        PyObject *indices = PyDict_GetItemWithError(leaves, key);
        Py_DECREF(key);
        return indices;
    }
    PyObject *indices = PyDict_GetItemWithError(computed, pair);
    if (indices != NULL || PyErr_Occurred() || inside == NULL)
        return indices;
    PyObject *seen = PyDict_GetItemWithError(inside, child);
    int made_here;
    if (seen != NULL) {
        made_here = seen == Py_True;
    } else {
        if (PyErr_Occurred() || (made_here = made_since(child, first)) < 0)
            return NULL;
        if (PyDict_SetItem(inside, child, made_here ? Py_True : Py_False) < 0 ||
            (made_here && PyList_Append(todo, child) < 0))
            return NULL;
    }
    *walked_into = made_here;
    return NULL;
}

/* One group: the edges (edge index, (child, output_nr)) leaving `owner`. `items` is a list of such tuples
 * (a walk kept for an inner call), or NULL to read `owner.next_functions`. */
static int walk_group(PyObject *owner, PyObject *items, PyObject *computed, PyObject *leaves,
                      PyObject *accumulate_grad, PyObject *inside, PyObject *todo, long long first,
                      PyObject *found, PyObject *exits) {
    PyObject *next = NULL, *pairs = NULL, *taken = NULL, *leaving = NULL;
    int status = -1;
    if (items == NULL && (next = PyObject_GetAttr(owner, str_next_functions)) == NULL)
        return -1;
    PyObject *sequence = items != NULL ? items : next;
    if (!PyTuple_Check(sequence) && !PyList_Check(sequence)) {
        PyErr_SetString(PyExc_TypeError, "edges_into: edges must be a tuple or list");
        goto done;
    }
    Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence);
    for (Py_ssize_t position = 0; position < count; position++) {
        PyObject *element = PySequence_Fast_GET_ITEM(sequence, position), *edge, *pair;
        if (items != NULL) { /* (edge, pair) */
            if (!PyTuple_Check(element) || PyTuple_GET_SIZE(element) != 2)
                goto bad_shape;
            edge = PyTuple_GET_ITEM(element, 0);
            pair = PyTuple_GET_ITEM(element, 1);
        } else {
            edge = NULL;
            pair = element;
        }
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2)
            goto bad_shape;
        PyObject *child = PyTuple_GET_ITEM(pair, 0);
        if (child == Py_None)
            continue;
        int walked_into;
        PyObject *indices = edge_indices(pair, child, computed, leaves, accumulate_grad, inside, todo, first,
                                         &walked_into);
        if (indices == NULL && PyErr_Occurred())
            goto done;
        if (walked_into)
            continue;
        PyObject *edge_number = edge != NULL ? Py_NewRef(edge) : PyLong_FromSsize_t(position);
        if (edge_number == NULL)
            goto done;
        if (exits != NULL) { /* an edge leaving the call's nodes */
            PyObject *item = items != NULL ? Py_NewRef(element) : PyTuple_Pack(2, edge_number, pair);
            if (item == NULL || (leaving == NULL && (leaving = PyList_New(0)) == NULL) ||
                PyList_Append(leaving, item) < 0) {
                Py_XDECREF(item);
                Py_DECREF(edge_number);
                goto done;
            }
            Py_DECREF(item);
        }
        if (indices == NULL) {
            Py_DECREF(edge_number);
            continue;
        }
        if (!PyList_Check(indices) || PyList_GET_SIZE(indices) == 0) {
            Py_DECREF(edge_number);
            goto bad_shape;
        }
        if (pairs == NULL) {
            if ((pairs = PyList_New(0)) == NULL || PyDict_SetItem(found, owner, pairs) < 0) {
                Py_DECREF(edge_number);
                goto done;
            }
        }
        Py_ssize_t place = 0, last = PyList_GET_SIZE(indices) - 1;
        if (last > 0) { /* a tensor passed twice: the node's edges go to its places in order */
            PyObject *key = PyLong_FromVoidPtr(indices), *before;
            if (key == NULL || (taken == NULL && (taken = PyDict_New()) == NULL)) {
                Py_XDECREF(key);
                Py_DECREF(edge_number);
                goto done;
            }
            before = PyDict_GetItemWithError(taken, key);
            place = before != NULL ? PyLong_AsSsize_t(before) + 1 : 0;
            PyObject *stored = PyLong_FromSsize_t(place);
            int failed = stored == NULL || PyDict_SetItem(taken, key, stored) < 0;
            Py_XDECREF(stored);
            Py_DECREF(key);
            if (failed) {
                Py_DECREF(edge_number);
                goto done;
            }
        }
        PyObject *entry = PyTuple_Pack(2, edge_number, PyList_GET_ITEM(indices, place < last ? place : last));
        Py_DECREF(edge_number);
        if (entry == NULL || PyList_Append(pairs, entry) < 0) {
            Py_XDECREF(entry);
            goto done;
        }
        Py_DECREF(entry);
    }
    if (leaving != NULL) {
        PyObject *exit = PyTuple_Pack(2, owner, leaving);
        if (exit == NULL || PyList_Append(exits, exit) < 0) {
            Py_XDECREF(exit);
            goto done;
        }
        Py_DECREF(exit);
    }
    status = 0;
    goto done;
bad_shape:
    PyErr_SetString(PyExc_TypeError, "edges_into: unexpected edge or index shape");
done:
    Py_XDECREF(next);
    Py_XDECREF(pairs);
    Py_XDECREF(taken);
    Py_XDECREF(leaving);
    return status;
}

static PyObject *edges_into(PyObject *self, PyObject *args) {
    PyObject *computed, *leaves, *roots, *walks, *accumulate_grad;
    long long first;
    int walk;
    if (!PyArg_ParseTuple(args, "O!O!OLpOO:edges_into", &PyDict_Type, &computed, &PyDict_Type, &leaves, &roots,
                          &first, &walk, &walks, &accumulate_grad))
        return NULL;
    PyObject *found = PyDict_New(), *exits = walks != Py_None ? PyList_New(0) : NULL;
    PyObject *todo = PyList_New(0), *inside = walk ? PyDict_New() : NULL;
    PyObject *result = NULL;
    if (found == NULL || todo == NULL || (walks != Py_None && exits == NULL) || (walk && inside == NULL))
        goto done;
    PyObject *root_list = PySequence_Fast(roots, "edges_into: roots must be a sequence");
    if (root_list == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(root_list); i++) {
        PyObject *node = PySequence_Fast_GET_ITEM(root_list, i);
        if (walk) { /* each root once, if made during the call */
            int contains = PyDict_Contains(inside, node), made = contains ? 0 : made_since(node, first);
            if (contains < 0 || made < 0 || (made && (PyDict_SetItem(inside, node, Py_True) < 0 ||
                                                      PyList_Append(todo, node) < 0))) {
                Py_DECREF(root_list);
                goto done;
            }
        } else if (PyList_Append(todo, node) < 0) {
            Py_DECREF(root_list);
            goto done;
        }
    }
    Py_DECREF(root_list);
    int with_walks = walk && walks != Py_None && PyDict_Check(walks) && PyDict_GET_SIZE(walks) > 0;
    while (PyList_GET_SIZE(todo) > 0) {
        Py_ssize_t top = PyList_GET_SIZE(todo) - 1;
        PyObject *node = Py_NewRef(PyList_GET_ITEM(todo, top));
        if (PyList_SetSlice(todo, top, top + 1, NULL) < 0) {
            Py_DECREF(node);
            goto done;
        }
        PyObject *inner = with_walks ? PyDict_GetItemWithError(walks, node) : NULL;
        int failed;
        if (inner != NULL) { /* made by a call inside this one: go on from the edges leaving its nodes */
            PyObject *groups = PySequence_Fast(inner, "edges_into: a kept walk must be a sequence");
            failed = groups == NULL;
            for (Py_ssize_t g = 0; !failed && g < PySequence_Fast_GET_SIZE(groups); g++) {
                PyObject *group = PySequence_Fast_GET_ITEM(groups, g);
                if (!PyTuple_Check(group) || PyTuple_GET_SIZE(group) != 2) {
                    PyErr_SetString(PyExc_TypeError, "edges_into: a kept walk holds (node, edges) pairs");
                    failed = 1;
                    break;
                }
                failed = walk_group(PyTuple_GET_ITEM(group, 0), PyTuple_GET_ITEM(group, 1), computed, leaves,
                                    accumulate_grad, inside, todo, first, found, exits) < 0;
            }
            Py_XDECREF(groups);
        } else {
            failed = PyErr_Occurred() != NULL ||
                     walk_group(node, NULL, computed, leaves, accumulate_grad, inside, todo, first, found, exits) < 0;
        }
        Py_DECREF(node);
        if (failed)
            goto done;
    }
    result = PyTuple_Pack(2, found, exits != NULL ? exits : Py_None);
done:
    Py_XDECREF(found);
    Py_XDECREF(exits);
    Py_XDECREF(todo);
    Py_XDECREF(inside);
    return result;
}

static PyMethodDef methods[] = {
    {"edges_into", edges_into, METH_VARARGS, "backward._edges_into in C: (found, exits)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_walk", NULL, -1, methods};

PyMODINIT_FUNC PyInit__walk(void) {
    str_sequence_nr = PyUnicode_InternFromString("_sequence_nr");
    str_next_functions = PyUnicode_InternFromString("next_functions");
    str_variable = PyUnicode_InternFromString("variable");
    if (str_sequence_nr == NULL || str_next_functions == NULL || str_variable == NULL)
        return NULL;
    return PyModule_Create(&module);
}
