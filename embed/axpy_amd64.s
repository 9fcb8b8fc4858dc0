#include "textflag.h"

// func axpyWidenAVX2(acc *float64, v float64, x *float32, n int)
//
// acc[i] += v * float64(x[i]), eight a step: the floats widened four at a
// time, multiplied, then added (no fused multiply-add, as in Go).
TEXT ·axpyWidenAVX2(SB), NOSPLIT, $0-32
	MOVQ         acc+0(FP), DI
	VBROADCASTSD v+8(FP), Y0
	MOVQ         x+16(FP), SI
	MOVQ         n+24(FP), CX

widen:
	VCVTPS2PD 0(SI), Y1
	VCVTPS2PD 16(SI), Y2
	VMULPD    Y0, Y1, Y1
	VMULPD    Y0, Y2, Y2
	VADDPD    0(DI), Y1, Y1
	VADDPD    32(DI), Y2, Y2
	VMOVUPD   Y1, 0(DI)
	VMOVUPD   Y2, 32(DI)
	ADDQ      $32, SI
	ADDQ      $64, DI
	SUBQ      $8, CX
	JNZ       widen
	VZEROUPPER
	RET

// func axpy64AVX2(acc *float64, v float64, x *float64, n int)
//
// acc[i] += v * x[i], eight a step, multiplied then added.
TEXT ·axpy64AVX2(SB), NOSPLIT, $0-32
	MOVQ         acc+0(FP), DI
	VBROADCASTSD v+8(FP), Y0
	MOVQ         x+16(FP), SI
	MOVQ         n+24(FP), CX

plain:
	VMULPD  0(SI), Y0, Y1
	VMULPD  32(SI), Y0, Y2
	VADDPD  0(DI), Y1, Y1
	VADDPD  32(DI), Y2, Y2
	VMOVUPD Y1, 0(DI)
	VMOVUPD Y2, 32(DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $8, CX
	JNZ     plain
	VZEROUPPER
	RET

// func axpyQ8AVX2(acc *float64, v float64, q *int8, scale float32, n int)
//
// acc[i] += v * float64(float32(q[i]) * scale), eight a step: the codes
// widened to int32 and converted to float32 (exactly: they are small),
// multiplied by scale in float32, widened to float64, multiplied by v,
// then added.
TEXT ·axpyQ8AVX2(SB), NOSPLIT, $0-40
	MOVQ         acc+0(FP), DI
	VBROADCASTSD v+8(FP), Y0
	MOVQ         q+16(FP), SI
	VBROADCASTSS scale+24(FP), Y3
	MOVQ         n+32(FP), CX

codes:
	VPMOVSXBD     0(SI), Y1
	VCVTDQ2PS     Y1, Y1
	VMULPS        Y3, Y1, Y1
	VCVTPS2PD     X1, Y2
	VEXTRACTF128  $1, Y1, X1
	VCVTPS2PD     X1, Y1
	VMULPD        Y0, Y2, Y2
	VMULPD        Y0, Y1, Y1
	VADDPD        0(DI), Y2, Y2
	VADDPD        32(DI), Y1, Y1
	VMOVUPD       Y2, 0(DI)
	VMOVUPD       Y1, 32(DI)
	ADDQ          $8, SI
	ADDQ          $64, DI
	SUBQ          $8, CX
	JNZ           codes
	VZEROUPPER
	RET
