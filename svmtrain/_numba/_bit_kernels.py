"""Bit-level numba intrinsics (LLVM instructions numba does not expose):
a float64's IEEE-754 bits and back, leading zeros, the full 64 x 64 -> 128
bit product. Used by the SMO block selections (order keys) and the
reader's decimal conversion."""
from llvmlite import ir
from numba import types
from numba.extending import intrinsic


@intrinsic
def bits_of(typingctx, x):
    """The IEEE-754 bits of a float64, as an int64."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


@intrinsic
def double_of(typingctx, k):
    """The float64 with the bits of an int64."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


@intrinsic
def leading_zeros(typingctx, x):
    """The number of leading zero bits of a nonzero uint64."""
    def codegen(context, builder, signature, args):
        return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 1))
    return types.uint64(types.uint64), codegen


@intrinsic
def mul_full(typingctx, a, b):
    """(high, low) 64-bit halves of the 128-bit product of two uint64."""
    sig = types.UniTuple(types.uint64, 2)(types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        i128 = ir.IntType(128)
        p = builder.mul(builder.zext(args[0], i128), builder.zext(args[1], i128))
        lo = builder.trunc(p, ir.IntType(64))
        hi = builder.trunc(builder.lshr(p, ir.Constant(i128, 64)), ir.IntType(64))
        return context.make_tuple(builder, signature.return_type, [hi, lo])
    return sig, codegen
