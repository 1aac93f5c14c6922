#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""SASS instructions per element in the fused layer's vector loop, reported
for a tuning study (no GPU needed: nvcc builds an sm_90 cubin, cuobjdump
disassembles it). It is no test: instruction counts move with every nvcc, and
a ceiling on them held fusekit to one compiler's output. The tests keep what
is a property of the code: 16-byte accesses and no spills (check_ptx.cmake).
`compiled_sass` serves codegen.tree_loads_in_flight (check_tree_sass.py).

    check_sass.py --nvcc NVCC --source fused_kernel.cu --include DIR --work DIR [--arch 90]

The vector loop is the innermost backward branch around the kernel's 16-byte
loads; its instructions are counted statically (the IEEE divisions' slow-path
calls, taken only for denormal or huge divisors, are outside it) and divided by
the elements one trip stores (4 floats per 16-byte store). cuobjdump and
nvdisasm come with the CUDA toolkit, or from the pip wheels nvidia-cuda-cuobjdump
and nvidia-cuda-nvdisasm (scripts/tools/install_deps.sh); without them the check says
SKIP."""
import argparse, glob, os, re, shutil, subprocess, sys, sysconfig

# The fused layer's kernels, by their input types in the mangled name: float, uint8.
SIGNATURES = ["JffE", "JhfE"]


def find_tool(name):
    hit = shutil.which(name)
    if hit:
        return hit
    roots = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    for root in roots:
        for path in sorted(glob.glob(os.path.join(root, "nvidia", "cu*", "bin", name))):
            return path
    return None


def compiled_sass(cubin_name):
    """The SASS of --source compiled for --arch (arguments --nvcc, --source,
    --include, --work, --arch), or None (and SKIP said) without the tools."""
    a = argparse.ArgumentParser()
    for name in ("--nvcc", "--source", "--include", "--work"):
        a.add_argument(name, required=True)
    a.add_argument("--arch", default="90")
    args = a.parse_args()
    cuobjdump, nvdisasm = find_tool("cuobjdump"), find_tool("nvdisasm")
    if not cuobjdump or not nvdisasm:
        print("SKIP: cuobjdump or nvdisasm not found (pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)")
        return None
    os.makedirs(args.work, exist_ok=True)
    cubin = os.path.join(args.work, cubin_name)
    subprocess.run([args.nvcc, "-std=c++17", "-O3", "-I", args.include, "-arch=sm_" + args.arch, "-cubin",
                    args.source, "-o", cubin], check=True)
    env = dict(os.environ, PATH=os.path.dirname(nvdisasm) + os.pathsep + os.environ.get("PATH", ""))
    return subprocess.run([cuobjdump, "-sass", cubin], check=True, stdout=subprocess.PIPE, text=True, env=env).stdout


def main():
    sass = compiled_sass("fused_sass.cubin")
    if sass is None:
        return 0
    functions = re.split(r"\n\s*Function : ", sass)
    failed = 0
    for signature in SIGNATURES:
        body = next((f for f in functions if "elementwise_kernel" in f.split("\n", 1)[0] and signature in f.split("\n", 1)[0]), None)
        if body is None:
            print("FAIL: no fused-layer kernel %s in the SASS" % signature)
            failed += 1
            continue
        code = [(int(m.group(1), 16), m.group(2).strip())
                for m in re.finditer(r"/\*([0-9a-f]{4,})\*/\s+([^;]*);", body)]
        loads = [at for at, text in code if "LDG.E.128" in text]
        best = None  # the innermost backward branch around a 16-byte load
        for at, text in code:
            m = re.search(r"BRA (?:!?P\d, )?0x([0-9a-f]+)", text)
            if not m:
                continue
            target = int(m.group(1), 16)
            if target < at and any(target <= ld <= at for ld in loads) and (best is None or at - target < best[1] - best[0]):
                best = (target, at)
        if best is None:
            print("FAIL: no vector loop around a 16-byte load in %s" % signature)
            failed += 1
            continue
        loop = [text for at, text in code if best[0] <= at <= best[1]]
        stores = sum("STG.E.128" in t for t in loop)
        elements = 4 * stores
        per = len(loop) / max(elements, 1)
        divisions = sum("MUFU.RCP" in t for t in loop)
        print("fused layer %s: %d instructions per trip, %d elements, %.1f per element; %d MUFU.RCP in the loop"
              % (signature, len(loop), elements, per, divisions))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
