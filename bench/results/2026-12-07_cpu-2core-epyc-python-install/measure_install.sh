#!/bin/bash
# one fresh venv per install; pip's cache warm (the same downloads for both trees)
export PATH=/usr/local/cuda/bin:$PATH
run() {  # name tree cmake_args
  rm -rf /tmp/mi-venv; python3 -m venv /tmp/mi-venv
  s=$(date +%s.%N)
  CMAKE_ARGS="$3" /tmp/mi-venv/bin/python -m pip install -q "$2/python" > /tmp/mi-$1.log 2>&1
  rc=$?
  e=$(date +%s.%N)
  python3 -c "print('$1', 'rc', $rc, round($e - $s, 1), 's')"
}
for round in 1; do
  run new-cpu /work/main "-DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=TRUE -DFUSEKIT_PYTHON_CUDA=OFF"
  run old-cpu /tmp/old/tree "-DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=TRUE -DFUSEKIT_PYTHON_CUDA=OFF"
  run new-full /work/main ""
  run old-full /tmp/old/tree ""
done
