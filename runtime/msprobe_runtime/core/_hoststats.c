/* Statistics of a tensor held in host memory, in one pass: max, min, sum and norm of contiguous float32,
 * float64 or bfloat16 data (max and min of integers and bools), appended to a bytearray. The PyTorch
 * runtime uses it for CPU tensors when they are recorded (capture.stats), while their data is still in
 * the cache; elsewhere the statistics come from the framework's own reductions (and in the hash, md5 and
 * tensor summary modes).
 *
 * The data is read once, in blocks: inside a block, LANES independent lanes keep max, min, sum and sum
 * of squares (so the compiler can use vector instructions without reordering any one lane's additions);
 * each block's sums are added into double totals. NaN follows the frameworks' reductions: any NaN makes
 * every statistic NaN (the lanes' comparisons skip NaN, the sum of squares does not, so it tells).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define LANES 16
#define BLOCK 512 /* elements per block: a multiple of LANES */

enum { FLOAT32 = 0, FLOAT64 = 1, BFLOAT16 = 2, INT64 = 3, INT32 = 4, INT16 = 5, INT8 = 6, UINT8 = 7 };

static inline float load_float32(const void *data, int64_t i) { return ((const float *)data)[i]; }
static inline double load_float64(const void *data, int64_t i) { return ((const double *)data)[i]; }
static inline float load_bfloat16(const void *data, int64_t i) {
    uint32_t bits = (uint32_t)((const uint16_t *)data)[i] << 16;
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* out[0..3] = max, min, sum, norm of `count` elements at `data`; T is the lanes' type */
#define DEFINE_REDUCE(NAME, T, LOAD)                                                                       \
    static void NAME(const void *data, int64_t count, double *out) {                                     \
        T high[LANES], low[LANES];                                                                         \
        double total = 0, squares = 0;                                                                     \
        for (int l = 0; l < LANES; l++) {                                                                  \
            high[l] = -INFINITY;                                                                           \
            low[l] = INFINITY;                                                                             \
        }                                                                                                  \
        int64_t i = 0, whole = count - count % LANES;                                                      \
        while (i < whole) {                                                                                \
            T sum[LANES], square[LANES];                                                                   \
            for (int l = 0; l < LANES; l++)                                                                \
                sum[l] = square[l] = 0;                                                                    \
            int64_t stop = i + BLOCK < whole ? i + BLOCK : whole;                                          \
            for (; i < stop; i += LANES)                                                                   \
                for (int l = 0; l < LANES; l++) {                                                          \
                    T v = LOAD(data, i + l);                                                               \
                    high[l] = v > high[l] ? v : high[l];                                                   \
                    low[l] = v < low[l] ? v : low[l];                                                      \
                    sum[l] += v;                                                                           \
                    square[l] += v * v;                                                                    \
                }                                                                                          \
            for (int l = 0; l < LANES; l++) {                                                              \
                total += sum[l];                                                                           \
                squares += square[l];                                                                      \
            }                                                                                              \
        }                                                                                                  \
        for (; i < count; i++) {                                                                           \
            T v = LOAD(data, i);                                                                           \
            high[0] = v > high[0] ? v : high[0];                                                           \
            low[0] = v < low[0] ? v : low[0];                                                              \
            T square = v * v; /* in the lanes' type, as in the blocks */                                   \
            total += v;                                                                                    \
            squares += square;                                                                             \
        }                                                                                                  \
        for (int l = 1; l < LANES; l++) {                                                                  \
            high[0] = high[l] > high[0] ? high[l] : high[0];                                               \
            low[0] = low[l] < low[0] ? low[l] : low[0];                                                    \
        }                                                                                                  \
        int nan = isnan(squares);                                                                          \
        out[0] = nan ? NAN : high[0];                                                                      \
        out[1] = nan ? NAN : low[0];                                                                       \
        out[2] = total;                                                                                    \
        out[3] = sqrt(squares);                                                                            \
    }

DEFINE_REDUCE(reduce_float32, float, load_float32)
DEFINE_REDUCE(reduce_float64, double, load_float64)
DEFINE_REDUCE(reduce_bfloat16, float, load_bfloat16)

/* integers (and bool, as uint8): out[0..1] = max and min as int64 (exact), out[2..3] unused (zero) */
#define DEFINE_RANGE(NAME, T)                                                                              \
    static void NAME(const void *data, int64_t count, double *out) {                                     \
        const T *x = (const T *)data;                                                                      \
        T high[LANES], low[LANES];                                                                         \
        for (int l = 0; l < LANES; l++)                                                                    \
            high[l] = low[l] = x[0];                                                                       \
        int64_t i = 0, whole = count - count % LANES;                                                      \
        for (; i < whole; i += LANES)                                                                      \
            for (int l = 0; l < LANES; l++) {                                                              \
                T v = x[i + l];                                                                            \
                high[l] = v > high[l] ? v : high[l];                                                       \
                low[l] = v < low[l] ? v : low[l];                                                          \
            }                                                                                              \
        for (; i < count; i++) {                                                                           \
            high[0] = x[i] > high[0] ? x[i] : high[0];                                                     \
            low[0] = x[i] < low[0] ? x[i] : low[0];                                                        \
        }                                                                                                  \
        for (int l = 1; l < LANES; l++) {                                                                  \
            high[0] = high[l] > high[0] ? high[l] : high[0];                                               \
            low[0] = low[l] < low[0] ? low[l] : low[0];                                                    \
        }                                                                                                  \
        int64_t range[4] = {high[0], low[0], 0, 0};                                                        \
        memcpy(out, range, sizeof range);                                                                  \
    }

DEFINE_RANGE(range_int64, int64_t)
DEFINE_RANGE(range_int32, int32_t)
DEFINE_RANGE(range_int16, int16_t)
DEFINE_RANGE(range_int8, int8_t)
DEFINE_RANGE(range_uint8, uint8_t)

typedef void (*Reducer)(const void *, int64_t, double *);
static const Reducer REDUCERS[] = {reduce_float32, reduce_float64, reduce_bfloat16, range_int64,
                                   range_int32,    range_int16,    range_int8,      range_uint8};

PyDoc_STRVAR(append_doc,
             "append(values, address, count, dtype)\n\n"
             "Append to the bytearray `values` four float64 numbers, max, min, sum and norm, of the `count`\n"
             "elements of contiguous host data at `address` (dtype 0 float32, 1 float64, 2 bfloat16); for\n"
             "integers (3 int64, 4 int32, 5 int16, 6 int8, 7 uint8 or bool) max and min as int64, then two\n"
             "zeros. The caller keeps the data alive during the call.");

static PyObject *append(PyObject *self, PyObject *args) {
    PyObject *values, *address;
    long long count;
    int dtype;
    if (!PyArg_ParseTuple(args, "O!OLi", &PyByteArray_Type, &values, &address, &count, &dtype))
        return NULL;
    const void *data = PyLong_AsVoidPtr(address);
    if (data == NULL && PyErr_Occurred())
        return NULL;
    if (count < 1 || dtype < 0 || dtype > UINT8) {
        PyErr_SetString(PyExc_ValueError, "append: no elements or unknown dtype");
        return NULL;
    }
    Py_ssize_t size = PyByteArray_GET_SIZE(values);
    if (PyByteArray_Resize(values, size + 4 * (Py_ssize_t)sizeof(double)) < 0)
        return NULL;
    double out[4];
    Reducer reduce = REDUCERS[dtype];
    if (count > BLOCK) {
        Py_BEGIN_ALLOW_THREADS
        reduce(data, count, out);
        Py_END_ALLOW_THREADS
    } else {
        reduce(data, count, out);
    }
    memcpy(PyByteArray_AS_STRING(values) + size, out, sizeof out);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"append", append, METH_VARARGS, append_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_hoststats",
                                    "One-pass statistics of tensors in host memory.", -1, methods};

PyMODINIT_FUNC PyInit__hoststats(void) { return PyModule_Create(&module); }
