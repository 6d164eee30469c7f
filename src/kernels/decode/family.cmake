# The decode family: GEMVs for a few tokens (mma.sync and float32 FMAs,
# programmatic dependent launch: sm_90 and later).
tess_add_family(decode
  ARCHS 90a
  SOURCES
    family.c
    gemv.cu)
