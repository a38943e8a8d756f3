# Finds LibTorch. A user's own LibTorch wins (-DTorch_DIR=/path/share/cmake/Torch);
# otherwise the torch wheel in the project's virtual environment provides it through
# torch.utils.cmake_prefix_path. Sets LMPROF_TORCH_HAS_CUDA and LMPROF_NVTX3_INCLUDE_DIR.

set(_lmprof_torch_prefix "")
if(NOT Torch_DIR AND NOT DEFINED ENV{Torch_DIR})
  if(EXISTS "${LMPROF_PYTHON}")
    execute_process(
      COMMAND "${LMPROF_PYTHON}" -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
      OUTPUT_VARIABLE _lmprof_torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
      RESULT_VARIABLE _lmprof_torch_rc ERROR_QUIET)
    if(_lmprof_torch_rc EQUAL 0)
      list(APPEND CMAKE_PREFIX_PATH "${_lmprof_torch_prefix}")
    else()
      set(_lmprof_torch_prefix "")
    endif()
  endif()
endif()

# A Torch_DIR inside a torch wheel (site-packages/torch/share/cmake/Torch) gets the same
# treatment of the wheel's CUDA libraries below as the venv's wheel.
if(NOT _lmprof_torch_prefix)
  set(_lmprof_user_torch_dir "${Torch_DIR}")
  if(NOT _lmprof_user_torch_dir AND DEFINED ENV{Torch_DIR})
    set(_lmprof_user_torch_dir "$ENV{Torch_DIR}")
  endif()
  if(_lmprof_user_torch_dir AND EXISTS "${_lmprof_user_torch_dir}/../../../../nvidia")
    get_filename_component(_lmprof_torch_prefix "${_lmprof_user_torch_dir}/.." REALPATH)
  endif()
endif()

# The torch wheel carries its own CUDA libraries under site-packages/nvidia, newer than
# the system toolkit's. Build and run against those so one process never mixes two CUDA
# runtimes: pre-set the cache entries LibTorch's CMake would fill from the toolkit, and
# resolve libtorch_cuda's dependencies through the wheel at link time (-rpath-link is
# searched before -rpath).
if(_lmprof_torch_prefix)
  get_filename_component(_lmprof_nvidia_dir "${_lmprof_torch_prefix}/../../../nvidia" REALPATH)
  file(GLOB _lmprof_cudart "${_lmprof_nvidia_dir}/cu*/lib/libcudart.so.*")
  file(GLOB _lmprof_nvrtc "${_lmprof_nvidia_dir}/cu*/lib/libnvrtc.so.*")
  list(FILTER _lmprof_nvrtc EXCLUDE REGEX "builtins")
  if(_lmprof_cudart AND _lmprof_nvrtc)
    list(GET _lmprof_cudart 0 _lmprof_cudart)
    list(GET _lmprof_nvrtc 0 _lmprof_nvrtc)
    set(CUDA_cudart_LIBRARY "${_lmprof_cudart}" CACHE FILEPATH "CUDA runtime (torch wheel)")
    set(CUDA_nvrtc_LIBRARY "${_lmprof_nvrtc}" CACHE FILEPATH "NVRTC (torch wheel)")
    set(CUDA_NVRTC_LIB "${_lmprof_nvrtc}" CACHE FILEPATH "NVRTC (torch wheel)")
  endif()
  file(GLOB _lmprof_nvidia_lib_dirs LIST_DIRECTORIES true "${_lmprof_nvidia_dir}/*/lib")
  foreach(_dir IN LISTS _lmprof_nvidia_lib_dirs)
    add_link_options("LINKER:-rpath-link,${_dir}")
  endforeach()
endif()

# LibTorch's CMake looks for the CUDA toolkit when the wheel has CUDA; point it at the
# system toolkit if nvcc is not on PATH.
if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CUDAToolkit_ROOT /usr/local/cuda CACHE PATH "CUDA toolkit")
endif()

# We compile no CUDA kernels of our own; naming the architectures stops LibTorch's CMake
# from building and running a GPU-detection program (which fails on machines without one).
if(NOT TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
  set(TORCH_CUDA_ARCH_LIST "8.0;9.0" CACHE STRING "CUDA architectures LibTorch's CMake assumes")
endif()

find_package(Torch REQUIRED)
message(STATUS "LibTorch ${Torch_VERSION} from ${Torch_DIR}")

set(LMPROF_TORCH_HAS_CUDA OFF)
if(TARGET torch_cuda OR TORCH_CUDA_LIBRARIES)
  set(LMPROF_TORCH_HAS_CUDA ON)
endif()
message(STATUS "LibTorch CUDA support: ${LMPROF_TORCH_HAS_CUDA}")

# NVTX3 is header-only; it comes with the CUDA toolkit (or any nvtx3 include dir).
find_path(LMPROF_NVTX3_INCLUDE_DIR nvtx3/nvToolsExt.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
if(LMPROF_NVTX3_INCLUDE_DIR)
  message(STATUS "NVTX3 headers: ${LMPROF_NVTX3_INCLUDE_DIR}")
else()
  message(WARNING "NVTX3 headers not found: NVTX ranges are compiled out")
endif()
