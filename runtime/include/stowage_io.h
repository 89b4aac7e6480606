/* stowage_io.h: the types of the positional I/O API that every generated <name>.h declares
 * (<name>_input_info, <name>_output_info, <name>_pool_info), shared by all models, so one generic application
 * or test harness can reach any model's inputs, outputs and pools by position. C99. */
#ifndef STOWAGE_IO_H_INCLUDED
#define STOWAGE_IO_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element type of an input or output, with the C type the generated structs use for it. */
typedef enum {
  STOWAGE_DTYPE_FLOAT32 = 1, /* float */
  STOWAGE_DTYPE_INT8 = 2,    /* int8_t */
  STOWAGE_DTYPE_UINT8 = 3,   /* uint8_t */
  STOWAGE_DTYPE_INT32 = 4,   /* int32_t */
  STOWAGE_DTYPE_INT64 = 5,   /* int64_t */
  STOWAGE_DTYPE_BOOL = 6     /* uint8_t holding 0 or 1 */
} stowage_dtype;

/* One graph input or output, as <name>_input_info / <name>_output_info describe it (read-only data in the
 * generated <name>.c). */
typedef struct {
  const char* name;      /* the model's tensor name (not the struct field's sanitized name) */
  int dtype;             /* a stowage_dtype */
  size_t elems;          /* number of elements (the product of the shape; 1 for rank 0) */
  size_t bytes;          /* bytes of data: elems times the element size (the <P>_INPUT_<i>_BYTES macro) */
  size_t rank;           /* number of dimensions */
  const int64_t* shape;  /* rank dimensions, outermost first, as in the graph; NULL when rank is 0 */
} stowage_tensor_info;

/* What a memory pool holds. */
typedef enum {
  STOWAGE_POOL_WORKSPACE = 1, /* activations: written while the model runs */
  STOWAGE_POOL_CONSTANT = 2   /* weights: read only */
} stowage_pool_kind;

/* Who provides a pool's memory (the board's `placement`). */
typedef enum {
  STOWAGE_POOL_USER = 1,   /* the application, through <name>_workspaces */
  STOWAGE_POOL_STATIC = 2, /* an array the generated code defines (or an image the application loads and passes) */
  STOWAGE_POOL_FIXED = 3   /* memory at a fixed device address */
} stowage_pool_placement;

/* One memory pool of the board, as <name>_pool_info describes it (in the board's pool order). */
typedef struct {
  const char* name;   /* the board's pool name */
  int kind;           /* a stowage_pool_kind */
  int placement;      /* a stowage_pool_placement */
  size_t size;        /* bytes this model uses in the pool, at least 1 (the <P>_POOL_<X>_SIZE macro) */
  size_t align;       /* alignment in bytes the pool's base address must have (<P>_POOL_<X>_ALIGN) */
  int in_workspaces;  /* 1 when the pool is a field of <name>_workspaces that the application sets
                         (<name>_set_pool); 0 for pools the generated code reaches on its own */
  const char* image;  /* constant pools delivered as a binary image (--weights): its file name
                         (<P>_POOL_<X>_IMAGE), which the application loads into the pool's memory (at `base` for a
                         fixed pool); NULL for other pools and for an image pool this model leaves empty */
  uintptr_t base;     /* fixed pools: the device address of the pool (of its first bank); 0 otherwise */
} stowage_pool_info;

#ifdef __cplusplus
}
#endif

#endif /* STOWAGE_IO_H_INCLUDED */
