/* tessera._fastcall: the hot path of a prepared Python call (python/tessera/call_cache.py) in C.
 *
 * A prepared tessera.gemm / grouped_mm call on torch tensors does two things per call: it builds
 * the key that finds its checked descriptor (each tensor's shape, strides, dtype and device, and
 * a factor tensor's storage extent), and it passes the tensors' data pointers to the C library.
 * Through ctypes and Python that is about ten microseconds; here it is a few attribute reads and
 * one call through the library's function pointer, which Python hands over once (ctypes gives
 * its address). The module links nothing: it takes libtessera's functions by address, so that
 * it always calls the library the package loaded.
 *
 * Built against CPython's stable ABI (3.9 on): one binary serves every Python 3 from 3.9. Where
 * it is missing (no CPython headers at build time), tessera falls back to the same steps in
 * Python (python/tessera/fastcall.py). */
#define Py_LIMITED_API 0x03090000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#include "tessera.h"

typedef tess_status (*gemm_fused_fn)(tess_handle, const tess_gemm_desc *, const tess_plan *, const void *,
                                     const float *, const void *, const float *, const void *, void *,
                                     const tess_epilogue_ptrs *);
typedef tess_status (*grouped_fused_fn)(tess_handle, const tess_grouped_gemm_desc *, const tess_plan *,
                                        const void *, const float *, const void *, const float *,
                                        const int32_t *, void *, const tess_epilogue_ptrs *);

/* Method and attribute names, interned once at import. */
static PyObject *s_shape, *s_stride, *s_dtype, *s_is_cuda, *s_get_device, *s_data_ptr, *s_untyped_storage,
    *s_nbytes, *s_storage_offset;

/* float32 elements of t's storage from its first element on (scales.storage_extent), or None
 * where the tensor cannot say (its Exception cleared, as the Python form does); NULL with
 * another exception (KeyboardInterrupt) set. */
static PyObject *storage_extent(PyObject *t) {
    PyObject *storage = PyObject_CallMethodObjArgs(t, s_untyped_storage, NULL);
    PyObject *nbytes = storage ? PyObject_CallMethodObjArgs(storage, s_nbytes, NULL) : NULL;
    PyObject *offset = nbytes ? PyObject_CallMethodObjArgs(t, s_storage_offset, NULL) : NULL;
    PyObject *extent = NULL;
    if (offset) {
        const long long bytes = PyLong_AsLongLong(nbytes), first = PyLong_AsLongLong(offset);
        if (!PyErr_Occurred())
            extent = PyLong_FromLongLong(bytes / 4 - first);
    }
    Py_XDECREF(storage);
    Py_XDECREF(nbytes);
    Py_XDECREF(offset);
    if (!extent) {
        if (!PyErr_ExceptionMatches(PyExc_Exception))
            return NULL; /* KeyboardInterrupt and the like go on up */
        PyErr_Clear();
        Py_INCREF(Py_None);
        extent = Py_None;
    }
    return extent;
}

/* Appends one tensor's part of a key to `items`: whether it is a CUDA tensor, its device index,
 * dtype, rank, sizes and strides, and for a factor tensor (`scale`) its storage extent
 * (storage_extent); one None for None. Plain ints and the dtype object, so that the key hashes and
 * compares at C speed (torch.Size and torch.device objects hash and compare in Python). 0 with an
 * exception set where an attribute is missing. */
static int append_tensor_key(PyObject *items, PyObject *t, int scale) {
    if (t == Py_None)
        return PyList_Append(items, Py_None) == 0;
    /* read one at a time, stopping at the first error (no Python call with an exception set) */
    PyObject *parts[5] = {NULL, NULL, NULL, NULL, NULL};
    int ok = (parts[0] = PyObject_GetAttr(t, s_is_cuda)) &&
             (parts[1] = PyObject_CallMethodObjArgs(t, s_get_device, NULL)) &&
             (parts[2] = PyObject_GetAttr(t, s_dtype)) && (parts[3] = PyObject_GetAttr(t, s_shape)) &&
             (parts[4] = PyObject_CallMethodObjArgs(t, s_stride, NULL));
    /* sizes and strides: tuples (torch.Size is one) of the same length */
    const Py_ssize_t rank = ok && PyTuple_Check(parts[3]) && PyTuple_Check(parts[4]) ? PyTuple_Size(parts[3]) : -1;
    if (ok && (rank < 0 || PyTuple_Size(parts[4]) != rank)) {
        PyErr_SetString(PyExc_TypeError, "keys: a tensor's shape and stride() must be tuples of one length");
        ok = 0;
    }
    PyObject *rank_obj = ok ? PyLong_FromSsize_t(rank) : NULL;
    ok = ok && rank_obj && PyList_Append(items, parts[0]) == 0 && PyList_Append(items, parts[1]) == 0 &&
         PyList_Append(items, parts[2]) == 0 && PyList_Append(items, rank_obj) == 0;
    for (Py_ssize_t i = 0; ok && i < 2 * rank; i++)
        ok = PyList_Append(items, PyTuple_GetItem(parts[3 + i / rank], i % rank)) == 0;
    if (ok && scale) {
        PyObject *extent = storage_extent(t);
        ok = extent && PyList_Append(items, extent) == 0;
        Py_XDECREF(extent);
    }
    Py_XDECREF(rank_obj);
    for (int i = 0; i < 5; i++)
        Py_XDECREF(parts[i]);
    return ok;
}

/* The tensor part of a key: append_tensor_key of each item of the tuple `tensors`, then of each
 * of `scales` as factor tensors, as one flat tuple. NULL with an exception set on an error. */
static PyObject *tensor_keys(PyObject *tensors, PyObject *scales) {
    PyObject *items = PyList_New(0);
    if (!items)
        return NULL;
    const Py_ssize_t nt = PyTuple_Size(tensors), ns = PyTuple_Size(scales);
    int ok = 1;
    for (Py_ssize_t i = 0; ok && i < nt + ns; i++)
        ok = i < nt ? append_tensor_key(items, PyTuple_GetItem(tensors, i), 0)
                    : append_tensor_key(items, PyTuple_GetItem(scales, i - nt), 1);
    PyObject *key = ok ? PyList_AsTuple(items) : NULL;
    Py_DECREF(items);
    return key;
}

/* keys(tensors, scales): the tensor part of a prepared call's key (tensor_keys): equal for two
 * calls exactly when every tensor has the same device, dtype, sizes and strides (and every factor
 * tensor the same storage extent). */
static PyObject *fast_keys(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *tensors, *scales;
    if (!PyArg_ParseTuple(args, "O!O!:keys", &PyTuple_Type, &tensors, &PyTuple_Type, &scales))
        return NULL;
    return tensor_keys(tensors, scales);
}

/* An address passed from Python (an int; None is NULL). 0 and -1 with an exception set where it
 * is neither. */
static int address_of(PyObject *o, void **out) {
    if (o == Py_None) {
        *out = NULL;
        return 1;
    }
    *out = PyLong_AsVoidPtr(o);
    return !(*out == NULL && PyErr_Occurred());
}

/* A tensor's data pointer (its data_ptr()), or NULL for None. 0 with an exception set where the
 * object has none. */
static int data_of(PyObject *t, void **out) {
    if (t == Py_None) {
        *out = NULL;
        return 1;
    }
    PyObject *p = PyObject_CallMethodObjArgs(t, s_data_ptr, NULL);
    if (!p)
        return 0;
    *out = PyLong_AsVoidPtr(p);
    Py_DECREF(p);
    return !(*out == NULL && PyErr_Occurred());
}

/* The addresses (fn, handle, desc, plan) and the tensors of one call (`count` of them, in the
 * function's order), converted. 0 with an exception set on a bad argument. */
static int call_args(PyObject *args, const char *name, void *addr[4], void *data[], int count) {
    if (PyTuple_Size(args) != 4 + count) {
        PyErr_Format(PyExc_TypeError, "%s takes %d arguments", name, 4 + count);
        return 0;
    }
    for (int i = 0; i < 4; i++)
        if (!address_of(PyTuple_GetItem(args, i), &addr[i]))
            return 0;
    if (!addr[0] || !addr[2]) {
        PyErr_Format(PyExc_ValueError, "%s: the function and the descriptor must not be NULL", name);
        return 0;
    }
    for (int i = 0; i < count; i++)
        if (!data_of(PyTuple_GetItem(args, 4 + i), &data[i]))
            return 0;
    return 1;
}

/* The tess_epilogue_ptrs of a bias and a residual pointer; NULL where both are NULL (what the
 * ctypes path passes then). */
static const tess_epilogue_ptrs *epilogue_of(tess_epilogue_ptrs *ep, void *bias, void *residual) {
    if (!bias && !residual)
        return NULL;
    *ep = (tess_epilogue_ptrs){.struct_size = sizeof *ep, .bias = bias, .residual = residual};
    return ep;
}

/* gemm(fn, handle, desc, plan, a, scale_a, b, scale_b, c, d, bias, residual) -> tess_status:
 * tess_gemm_fused at address fn on a prepared descriptor, with each tensor's data pointer (None:
 * NULL). The GIL is held: the call only queues work. */
static PyObject *fast_gemm(PyObject *self, PyObject *args) {
    (void)self;
    void *addr[4], *t[8];
    if (!call_args(args, "gemm", addr, t, 8))
        return NULL;
    tess_epilogue_ptrs ep;
    const tess_status st = ((gemm_fused_fn)addr[0])((tess_handle)addr[1], (const tess_gemm_desc *)addr[2],
                                                    (const tess_plan *)addr[3], t[0], (const float *)t[1], t[2],
                                                    (const float *)t[3], t[4], t[5], epilogue_of(&ep, t[6], t[7]));
    return PyLong_FromLong((long)st);
}

/* grouped(fn, handle, desc, plan, x, scale_x, w, scale_w, group_rows, y, bias) -> tess_status:
 * tess_grouped_gemm_fused at address fn, as gemm. */
static PyObject *fast_grouped(PyObject *self, PyObject *args) {
    (void)self;
    void *addr[4], *t[7];
    if (!call_args(args, "grouped", addr, t, 7))
        return NULL;
    tess_epilogue_ptrs ep;
    const tess_status st = ((grouped_fused_fn)addr[0])(
        (tess_handle)addr[1], (const tess_grouped_gemm_desc *)addr[2], (const tess_plan *)addr[3], t[0],
        (const float *)t[1], t[2], (const float *)t[3], (const int32_t *)t[4], t[5], epilogue_of(&ep, t[6], NULL));
    return PyLong_FromLong((long)st);
}

/* What gemm_prepared needs of torch and the library, given once by setup(): torch.Tensor, torch's
 * current-stream accessor (torch._C._cuda_getCurrentRawStream) and tess_gemm_fused's address. */
static PyObject *s_tensor_type, *s_raw_stream, *s_handle, *s__h, *s_value, *s_desc_address, *s_c_is_out, *s_empty;
static void *s_gemm_fn;

/* setup(tensor_type, raw_stream, gemm_fused_address): enables gemm_prepared. */
static PyObject *fast_setup(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *tensor_type, *raw_stream, *fn;
    if (!PyArg_ParseTuple(args, "OOO:setup", &tensor_type, &raw_stream, &fn))
        return NULL;
    void *address;
    if (!address_of(fn, &address) || !address) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "setup: tess_gemm_fused's address must not be NULL");
        return NULL;
    }
    Py_INCREF(tensor_type);
    Py_INCREF(raw_stream);
    Py_XDECREF(s_tensor_type);
    Py_XDECREF(s_raw_stream);
    s_tensor_type = tensor_type, s_raw_stream = raw_stream;
    s_gemm_fn = address;
    Py_RETURN_NONE;
}

/* Whether every item of `tensors` is a torch tensor (or None where `optional`); -1 on an error. */
static int all_tensors(PyObject *const *tensors, int count, int optional) {
    for (int i = 0; i < count; i++) {
        if (optional && tensors[i] == Py_None)
            continue;
        const int is = PyObject_IsInstance(tensors[i], s_tensor_type);
        if (is <= 0)
            return is;
    }
    return 1;
}

/* PyTorch's current stream (an int) on a's device when a is a CUDA tensor; None (a new
 * reference) otherwise, or where torch cannot say (its error cleared: the Python steps then
 * decide); NULL on another error. call_cache.call_selector without a handle. */
static PyObject *cuda_stream_of(PyObject *a) {
    PyObject *is_cuda = PyObject_GetAttr(a, s_is_cuda);
    if (!is_cuda)
        return NULL;
    const int cuda = PyObject_IsTrue(is_cuda);
    Py_DECREF(is_cuda);
    if (cuda < 0)
        return NULL;
    PyObject *index = cuda ? PyObject_CallMethodObjArgs(a, s_get_device, NULL) : NULL;
    PyObject *stream = index ? PyObject_CallFunctionObjArgs(s_raw_stream, index, NULL) : NULL;
    Py_XDECREF(index);
    if (!stream) {
        PyErr_Clear();
        Py_INCREF(Py_None);
        stream = Py_None;
    }
    return stream;
}

/* An attribute of the prepared call's handle chain: p.handle._h.value (the tess_handle). 0 with an
 * exception set on an error. */
static int handle_of(PyObject *prepared, void **out) {
    PyObject *handle = PyObject_GetAttr(prepared, s_handle);
    PyObject *h = handle ? PyObject_GetAttr(handle, s__h) : NULL;
    PyObject *value = h ? PyObject_GetAttr(h, s_value) : NULL;
    const int ok = value && address_of(value, out);
    Py_XDECREF(value);
    Py_XDECREF(h);
    Py_XDECREF(handle);
    return ok;
}

/* gemm_prepared(entries, tensors, scales, rest, plan) -> out, a failed tess_status (an int), or
 * None: a tessera.gemm call on the default handle, whole: its key
 * ((call_cache.tensor_keys(tensors, scales), rest, stream), as gemm._call_key builds it) looked up
 * in `entries` (call_cache's), and on a hit its launch, into out where one is given, else into a
 * new D from the prepared call's allocator (its `empty`). tensors = (a, b, out or None, c, bias,
 * residual), scales = (scale_a, scale_b). None where the call is not one this path takes (not torch tensors
 * on a CUDA device, or no prepared call yet, or an unhashable key): the Python steps then run. */
static PyObject *fast_gemm_prepared(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *entries, *tensors, *scales, *rest, *plan;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O:gemm_prepared", &PyDict_Type, &entries, &PyTuple_Type, &tensors,
                          &PyTuple_Type, &scales, &PyTuple_Type, &rest, &plan))
        return NULL;
    if (!s_tensor_type || PyTuple_Size(tensors) != 6 || PyTuple_Size(scales) != 2) {
        PyErr_SetString(PyExc_ValueError, "gemm_prepared: setup() first; 6 tensors and 2 scales");
        return NULL;
    }
    PyObject *t[8];
    for (int i = 0; i < 6; i++)
        t[i] = PyTuple_GetItem(tensors, i);
    t[6] = PyTuple_GetItem(scales, 0), t[7] = PyTuple_GetItem(scales, 1);
    /* alpha and beta as gemm._call_key keys them (float()): exact floats and ints only here, so
     * that another number type (a complex, which float() refuses) takes the Python steps */
    if (PyTuple_Size(rest) < 2)
        Py_RETURN_NONE;
    for (int i = 0; i < 2; i++) {
        PyObject *x = PyTuple_GetItem(rest, i);
        if (!PyFloat_CheckExact(x) && !PyLong_CheckExact(x))
            Py_RETURN_NONE;
    }
    int is = all_tensors(t, 2, 0); /* a and b; out may be None */
    if (is == 1)
        is = all_tensors(t + 2, 6, 1);
    if (is <= 0)
        return is < 0 ? NULL : (Py_INCREF(Py_None), Py_None);
    PyObject *stream = cuda_stream_of(t[0]);
    if (!stream || stream == Py_None)
        return stream;
    PyObject *tensor_part = tensor_keys(tensors, scales);
    PyObject *key = tensor_part ? PyTuple_Pack(3, tensor_part, rest, stream) : NULL;
    Py_XDECREF(tensor_part);
    Py_DECREF(stream);
    if (!key)
        return NULL;
    PyObject *prepared = PyDict_GetItemWithError(entries, key); /* borrowed */
    Py_DECREF(key);
    if (!prepared) {
        if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_TypeError))
            return NULL;
        PyErr_Clear(); /* a miss, or an unhashable key: the Python steps */
        Py_RETURN_NONE;
    }
    /* Held until the launch has read its descriptor: Python that data_ptr runs (a tensor
     * subclass's) or another thread may drop the entry from the dict meanwhile. */
    Py_INCREF(prepared);
    void *handle = NULL, *desc = NULL, *plan_address = NULL, *data[8] = {0};
    PyObject *desc_obj = NULL, *c_is_out = NULL, *empty = NULL, *out = NULL;
    int ok = (desc_obj = PyObject_GetAttr(prepared, s_desc_address)) &&
             (c_is_out = PyObject_GetAttr(prepared, s_c_is_out)) && handle_of(prepared, &handle) &&
             address_of(desc_obj, &desc) && address_of(plan, &plan_address);
    if (ok && t[2] == Py_None) { /* D allocated as the prepared call's first one was */
        ok = (empty = PyObject_GetAttr(prepared, s_empty)) && (out = PyObject_CallObject(empty, NULL));
    } else if (ok) {
        Py_INCREF(t[2]);
        out = t[2];
    }
    const int c_from_out = ok ? PyObject_IsTrue(c_is_out) : 0;
    ok = ok && c_from_out >= 0;
    /* tess_gemm_fused's order: a, scale_a, b, scale_b, c, d, bias, residual */
    PyObject *order[8] = {t[0], t[6], t[1], t[7], t[3] != Py_None ? t[3] : c_from_out == 1 ? out : Py_None,
                          out, t[4], t[5]};
    for (int i = 0; ok && i < 8; i++)
        ok = data_of(order[i], &data[i]);
    tess_status st = TESS_STATUS_SUCCESS;
    if (ok) {
        tess_epilogue_ptrs ep;
        st = ((gemm_fused_fn)s_gemm_fn)((tess_handle)handle, (const tess_gemm_desc *)desc,
                                        (const tess_plan *)plan_address, data[0], (const float *)data[1], data[2],
                                        (const float *)data[3], data[4], data[5], epilogue_of(&ep, data[6], data[7]));
    }
    Py_XDECREF(desc_obj);
    Py_XDECREF(c_is_out);
    Py_XDECREF(empty);
    Py_DECREF(prepared);
    if (!ok || st != TESS_STATUS_SUCCESS) {
        Py_XDECREF(out);
        return ok ? PyLong_FromLong((long)st) : NULL;
    }
    return out;
}

static PyMethodDef methods[] = {
    {"keys", fast_keys, METH_VARARGS, "keys(tensors, scales): the tensor part of a prepared call's key"},
    {"gemm", fast_gemm, METH_VARARGS, "gemm(fn, handle, desc, plan, a, sa, b, sb, c, d, bias, residual) -> status"},
    {"grouped", fast_grouped, METH_VARARGS, "grouped(fn, handle, desc, plan, x, sx, w, sw, rows, y, bias) -> status"},
    {"setup", fast_setup, METH_VARARGS, "setup(tensor_type, raw_stream, gemm_fused_address): enables gemm_prepared"},
    {"gemm_prepared", fast_gemm_prepared, METH_VARARGS,
     "gemm_prepared(entries, tensors, scales, rest, plan) -> out, a failed status, or None (not taken)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastcall",
                                    "The prepared calls' keys and launches in C (tessera.fastcall).", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__fastcall(void); /* the one symbol the interpreter looks up */
PyMODINIT_FUNC PyInit__fastcall(void) {
    struct {
        PyObject **slot;
        const char *name;
    } names[] = {{&s_shape, "shape"},       {&s_stride, "stride"},
                 {&s_dtype, "dtype"},       {&s_is_cuda, "is_cuda"},
                 {&s_get_device, "get_device"},
                 {&s_data_ptr, "data_ptr"}, {&s_untyped_storage, "untyped_storage"},
                 {&s_nbytes, "nbytes"},     {&s_storage_offset, "storage_offset"},
                 {&s_handle, "handle"},
                 {&s__h, "_h"},             {&s_value, "value"},
                 {&s_desc_address, "desc_address"}, {&s_c_is_out, "c_is_out"},
                 {&s_empty, "empty"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!(*names[i].slot = PyUnicode_InternFromString(names[i].name)))
            return NULL;
    return PyModule_Create(&module);
}
