#include "textflag.h"

// func dotSIMD(a, b *float32, n int) float32
//
// Four accumulators of eight floats each, fused multiply-add, 32 floats a
// step; n is a positive multiple of 32.
TEXT ·dotSIMD(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

loop:
	VMOVUPS 0(SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VFMADD231PS 0(DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JNZ  loop

	// Add the four accumulators, then the eight lanes.
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func dotQ8SIMD(u *int16, c *int8, n int) int32
//
// The integer dot product of n 16-bit query codes and n 8-bit vector
// codes: sixteen codes widened to 16 bits, multiplied pairwise and added
// in pairs into eight 32-bit lanes, two accumulators, 32 codes a step; n
// is a positive multiple of 32. The caller keeps every sum in range.
TEXT ·dotQ8SIMD(SB), NOSPLIT, $0-28
	MOVQ u+0(FP), SI
	MOVQ c+8(FP), DI
	MOVQ n+16(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1

loop:
	VPMOVSXBW 0(DI), Y2
	VPMOVSXBW 16(DI), Y3
	VPMADDWD  0(SI), Y2, Y2
	VPMADDWD  32(SI), Y3, Y3
	VPADDD    Y2, Y0, Y0
	VPADDD    Y3, Y1, Y1
	ADDQ      $64, SI
	ADDQ      $32, DI
	SUBQ      $32, CX
	JNZ       loop

	// Add the two accumulators, then the eight lanes.
	VPADDD       Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, AX
	VZEROUPPER
	MOVL         AX, ret+24(FP)
	RET

// func coarseScores6(signs *uint64, planes *uint64, n int, out *int32)
//
// The coarse scores of n vectors of six words of signs each (q1.go):
// for each, the popcounts of its words and the query's four bit planes
// (planes[w*4+k]), weighted 1, 2, 4 and -8. n is positive.
#define PLANES(w) \
	MOVQ    (w*8)(SI), R8 \
	MOVQ    R8, R9 \
	ANDQ    (w*32)(DI), R9 \
	POPCNTQ R9, R9 \
	ADDQ    R9, AX \
	MOVQ    R8, R10 \
	ANDQ    (w*32+8)(DI), R10 \
	POPCNTQ R10, R10 \
	ADDQ    R10, BX \
	MOVQ    R8, R11 \
	ANDQ    (w*32+16)(DI), R11 \
	POPCNTQ R11, R11 \
	ADDQ    R11, R12 \
	ANDQ    (w*32+24)(DI), R8 \
	POPCNTQ R8, R8 \
	ADDQ    R8, R13

TEXT ·coarseScores6(SB), NOSPLIT, $0-32
	MOVQ signs+0(FP), SI
	MOVQ planes+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ out+24(FP), DX

vec:
	XORQ AX, AX
	XORQ BX, BX
	XORQ R12, R12
	XORQ R13, R13
	PLANES(0)
	PLANES(1)
	PLANES(2)
	PLANES(3)
	PLANES(4)
	PLANES(5)
	SHLQ $1, BX
	SHLQ $2, R12
	SHLQ $3, R13
	ADDQ BX, AX
	ADDQ R12, AX
	SUBQ R13, AX
	MOVL AX, 0(DX)
	ADDQ $48, SI
	ADDQ $4, DX
	DECQ CX
	JNZ  vec
	RET
