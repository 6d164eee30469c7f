# The sm90 family: Hopper's wgmma + TMA GEMMs, dense, grouped and k-grouped. Its
# kernels use sm_90a-only instructions, so it is built for 90a alone.
include(${CMAKE_CURRENT_LIST_DIR}/instances.cmake)
tess_generate_instances(${CMAKE_CURRENT_LIST_DIR}/instances.list ${PROJECT_BINARY_DIR}/generated/sm90 _sm90_instances)
tess_add_family(sm90
  ARCHS 90a
  SOURCES
    family.c
    kernel_table.c
    params.c
    cost_dense.c
    plan_dense.c
    plan_grouped.c
    plan_wgrad.c
    ${_sm90_instances})
