"""Requantizes a GGUF model with the llama.cpp library node-llama-cpp ships (no build, no download).

Usage: python3 requantize.py NODE_MODULES IN.gguf OUT.gguf [FTYPE]

FTYPE is a llama_ftype number (3: Q4_1, the default). The default model ships as Q4_K_M; as
Q4_1 each of its 32-weight blocks keeps its scale and minimum (Q4_K's sub-blocks hold the same
two), and a generated token takes fewer operations on a CPU (docs/performance.md). The output
is written next to OUT and renamed into place only when whole. Exits non-zero, writing
nothing, when the library or its parameters are not as this script expects.
"""
import ctypes
import glob
import os
import sys

LLAMA_FTYPE_MOSTLY_Q8_0 = 7


def library_dir(node_modules: str) -> str:
    # The CPU build for this machine's platform (not the CUDA or Vulkan ones).
    for pattern in ('@node-llama-cpp/linux-x64/bins/*', '@node-llama-cpp/linux-arm64/bins/*', '@node-llama-cpp/mac-*/bins/*'):
        for candidate in sorted(glob.glob(os.path.join(node_modules, pattern))):
            if glob.glob(os.path.join(candidate, 'libllama*')):
                return candidate
    raise SystemExit(f'requantize: no libllama under {node_modules}/@node-llama-cpp')


def main() -> None:
    if len(sys.argv) not in (4, 5):
        raise SystemExit(__doc__)
    node_modules, source, target = sys.argv[1:4]
    ftype = int(sys.argv[4]) if len(sys.argv) == 5 else 3
    where = library_dir(node_modules)
    # ggml first, globally, so libllama resolves its symbols against them.
    for name in ('libggml-base', 'libggml.'):
        for path in glob.glob(os.path.join(where, name + '*')):
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    llama = ctypes.CDLL(glob.glob(os.path.join(where, 'libllama.*'))[0])

    class Params(ctypes.Structure):
        # Larger than llama_model_quantize_params: the fields read and set here come first.
        _fields_ = [('raw', ctypes.c_ubyte * 256)]

    llama.llama_model_quantize_default_params.restype = Params
    llama.llama_model_quantize.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(Params)]
    llama.llama_model_quantize.restype = ctypes.c_uint32
    llama.llama_backend_init()
    raw = bytearray(bytes(llama.llama_model_quantize_default_params().raw))
    nthread, default_ftype = int.from_bytes(raw[0:4], 'little', signed=True), int.from_bytes(raw[4:8], 'little')
    # int32 nthread, ftype, output and embedding types, then the flags allow_requantize and
    # quantize_output_tensor: the defaults must read as llama.h gives them.
    if nthread != 0 or default_ftype != LLAMA_FTYPE_MOSTLY_Q8_0 or raw[16] != 0 or raw[17] != 1:
        raise SystemExit('requantize: llama_model_quantize_params is not laid out as expected; leaving the model as it is')
    raw[4:8] = ftype.to_bytes(4, 'little')
    raw[16] = 1  # allow_requantize
    params = Params.from_buffer_copy(bytes(raw))
    partial = target + '.partial'
    if os.path.exists(partial):
        os.remove(partial)
    code = llama.llama_model_quantize(source.encode(), partial.encode(), ctypes.byref(params))
    if code != 0 or not os.path.exists(partial):
        if os.path.exists(partial):
            os.remove(partial)
        raise SystemExit(f'requantize: llama_model_quantize returned {code}')
    os.replace(partial, target)


if __name__ == '__main__':
    main()
