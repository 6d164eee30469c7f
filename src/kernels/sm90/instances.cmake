# The sm90 kernel instances, generated from one list (instances.list beside this file):
# each line becomes one .cu file that instantiates its kernels and a table part,
# and kernel_parts.inc lists the parts in the list's order for the family's
# table (kernel_table.c). Regenerated at configure time; an edited list
# re-runs the configure step.

# Kernels each set makes (the length of its table part) and the macro of
# gemm_sm90.cuh that spells them, given BM, BN, stages, cluster [, scaling].
set(_tess_set_f16 8 TESS_GEMM_TILE)
set(_tess_set_f16_tokens 4 TESS_GEMM_TOKEN_TILE)
set(_tess_set_fp8 4 TESS_GEMM_FP8_TILE)
set(_tess_set_fp8_pingpong 4 TESS_GEMM_FP8_PINGPONG_TILE)
set(_tess_set_tf32 1 TESS_GEMM_TF32_TILE)
set(_tess_set_int8 1 TESS_GEMM_INT8_TILE)
set(_tess_set_f16_pingpong 8 TESS_GEMM_PINGPONG_TILE)
set(_tess_set_fp8_tokens 3 TESS_GEMM_FP8_TOKEN_TILE)
set(_tess_set_grouped_f16 2 TESS_GROUPED_F16_TILE)
set(_tess_set_f16_kgrouped 2 TESS_KGROUPED_F16_TILE)
set(_tess_set_grouped_f16_nmajor 2 TESS_GROUPED_F16_NMAJOR_TILE)
set(_tess_set_grouped_fp8 2 TESS_GROUPED_FP8_TILE)
set(_tess_set_grouped_f16_tokens 2 TESS_GROUPED_F16_TOKEN_TILE)
set(_tess_set_grouped_fp8_tokens 2 TESS_GROUPED_FP8_TOKEN_TILE)
set(_tess_scalings PLAIN PROMOTE BLOCK_ROWS BLOCK_ROWS_COLS)

# tess_generate_instances(<list file> <output dir> <sources variable>):
# writes <output dir>/<stem>.cu per line and <output dir>/kernel_parts.inc,
# and appends the .cu paths to <sources variable>. With TESS_INSTANCES (a
# regular expression) only the lines whose stem matches are built: a lab
# build for timing a few kernels (the planner offers what is built; the
# tests expect every instance).
function(tess_generate_instances list_file out_dir sources_var)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${list_file})
  file(STRINGS ${list_file} _lines)
  file(RELATIVE_PATH _list_name ${PROJECT_SOURCE_DIR} ${list_file})
  set(_sources "")
  set(_externs "")
  set(_parts "")
  set(_total 0)
  foreach(_line IN LISTS _lines)
    string(STRIP "${_line}" _line)
    if(_line STREQUAL "" OR _line MATCHES "^#")
      continue()
    endif()
    string(REGEX REPLACE "[ \t]+" ";" _f "${_line}")
    list(LENGTH _f _n)
    if(_n LESS 6 OR _n GREATER 7)
      message(FATAL_ERROR "${_list_name}: '${_line}': want stem set BM BN stages cluster [scaling]")
    endif()
    list(GET _f 0 _stem)
    list(GET _f 1 _set)
    list(SUBLIST _f 2 4 _tile)
    if(NOT DEFINED _tess_set_${_set})
      message(FATAL_ERROR "${_list_name}: '${_line}': unknown set '${_set}'")
    endif()
    list(GET _tess_set_${_set} 0 _count)
    list(GET _tess_set_${_set} 1 _macro)
    list(GET _tile 0 _bm)
    list(GET _tile 1 _bn)
    list(GET _tile 2 _stages)
    list(GET _tile 3 _cluster)
    if(_set MATCHES "tokens")
      if(NOT _cluster EQUAL 1)
        message(FATAL_ERROR "${_list_name}: '${_line}': token tiles run in clusters of 1")
      endif()
      set(_args "${_bm}, ${_bn}, ${_stages}")
    else()
      if(_set MATCHES "pingpong" AND NOT _cluster EQUAL 1)
        message(FATAL_ERROR "${_list_name}: '${_line}': pingpong tiles run in clusters of 1")
      endif()
      set(_args "${_bm}, ${_bn}, ${_stages}, ${_cluster}")
    endif()
    if(_set MATCHES "^fp8(_pingpong)?$")
      if(NOT _n EQUAL 7)
        message(FATAL_ERROR "${_list_name}: '${_line}': fp8 lines name a scaling (${_tess_scalings})")
      endif()
      list(GET _f 6 _scaling)
      if(NOT _scaling IN_LIST _tess_scalings)
        message(FATAL_ERROR "${_list_name}: '${_line}': scaling '${_scaling}' is none of ${_tess_scalings}")
      endif()
      string(APPEND _args ", TESS_SCALING_${_scaling}")
    elseif(_n EQUAL 7)
      message(FATAL_ERROR "${_list_name}: '${_line}': only fp8 lines name a scaling")
    endif()
    if(NOT TESS_INSTANCES STREQUAL "" AND NOT _stem MATCHES "${TESS_INSTANCES}")
      continue()
    endif()
    set(_symbol tess_sm90_part_${_stem})
    set(_cu ${out_dir}/${_stem}.cu)
    file(CONFIGURE OUTPUT ${_cu} CONTENT "// Generated from ${_list_name} (${_stem}): do not edit.
#include \"kernels/sm90/gemm_sm90.cuh\"

extern \"C\" const tess_gemm_kernel ${_symbol}[${_count}] = {${_macro}(${_args})};
")
    list(APPEND _sources ${_cu})
    string(APPEND _externs "extern const tess_gemm_kernel ${_symbol}[${_count}];\n")
    string(APPEND _parts " {${_symbol}, ${_count}},")
    math(EXPR _total "${_total} + ${_count}")
  endforeach()
  if(_total EQUAL 0)
    message(FATAL_ERROR "TESS_INSTANCES '${TESS_INSTANCES}' matches no line of ${_list_name}")
  endif()
  if(NOT TESS_INSTANCES STREQUAL "")
    list(LENGTH _sources _kept)
    message(STATUS "tessera: ${_kept} sm90 instances match TESS_INSTANCES '${TESS_INSTANCES}' (a lab build)")
  endif()
  file(CONFIGURE OUTPUT ${out_dir}/kernel_parts.inc CONTENT "/* Generated from ${_list_name}: do not edit. */
${_externs}
#define TESS_SM90_KERNEL_COUNT ${_total}
#define TESS_SM90_KERNEL_PARTS${_parts}
")
  set(${sources_var} ${${sources_var}} ${_sources} PARENT_SCOPE)
endfunction()
