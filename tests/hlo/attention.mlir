module @jit_attention attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x16x32xf32>, %arg1: tensor<32x32xf32>, %arg2: tensor<32x32xf32>, %arg3: tensor<32x32xf32>, %arg4: tensor<32x32xf32>) -> (tensor<2x16x32xf32> {jax.result_info = ""}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x16x32xf32>, tensor<32x32xf32>) -> tensor<2x16x32xf32> loc(#loc10)
    %1 = stablehlo.reshape %0 : (tensor<2x16x32xf32>) -> tensor<2x16x4x8xf32>
    %2 = stablehlo.transpose %1, dims = [0, 2, 1, 3] : (tensor<2x16x4x8xf32>) -> tensor<2x4x16x8xf32>
    %3 = stablehlo.dot_general %arg0, %arg2, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x16x32xf32>, tensor<32x32xf32>) -> tensor<2x16x32xf32> loc(#loc11)
    %4 = stablehlo.reshape %3 : (tensor<2x16x32xf32>) -> tensor<2x16x4x8xf32>
    %5 = stablehlo.transpose %4, dims = [0, 2, 1, 3] : (tensor<2x16x4x8xf32>) -> tensor<2x4x16x8xf32>
    %6 = stablehlo.dot_general %arg0, %arg3, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x16x32xf32>, tensor<32x32xf32>) -> tensor<2x16x32xf32>
    %7 = stablehlo.reshape %6 : (tensor<2x16x32xf32>) -> tensor<2x16x4x8xf32>
    %8 = stablehlo.transpose %7, dims = [0, 2, 1, 3] : (tensor<2x16x4x8xf32>) -> tensor<2x4x16x8xf32>
    %9 = stablehlo.dot_general %2, %5, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x16xf32> loc(#loc12)
    %cst = stablehlo.constant dense<0.353553385> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x4x16x16xf32>
    %11 = stablehlo.multiply %9, %10 : tensor<2x4x16x16xf32>
    %12 = call @_softmax(%11) : (tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32> loc(#loc13)
    %13 = "stablehlo.dot_general"(%12, %8) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32> loc(#loc14)
    %14 = stablehlo.transpose %13, dims = [0, 2, 1, 3] : (tensor<2x4x16x8xf32>) -> tensor<2x16x4x8xf32>
    %15 = stablehlo.reshape %14 : (tensor<2x16x4x8xf32>) -> tensor<2x16x32xf32>
    %16 = stablehlo.dot_general %15, %arg4, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x16x32xf32>, tensor<32x32xf32>) -> tensor<2x16x32xf32>
    return %16 : tensor<2x16x32xf32>
  }
  func.func private @_softmax(%arg0: tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32> {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [3] : (tensor<2x4x16x16xf32>, tensor<f32>) -> tensor<2x4x16xf32> loc(#loc15)
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x4x16xf32>
    %2 = stablehlo.maximum %1, %0 : tensor<2x4x16xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1, 2] : (tensor<2x4x16xf32>) -> tensor<2x4x16x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2, 3] : (tensor<2x4x16x1xf32>) -> tensor<2x4x16x16xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<2x4x16x16xf32>
    %6 = stablehlo.exponential %5 : tensor<2x4x16x16xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) across dimensions = [3] : (tensor<2x4x16x16xf32>, tensor<f32>) -> tensor<2x4x16xf32>
     reducer(%arg1: tensor<f32>, %arg2: tensor<f32>)  {
      %11 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %11 : tensor<f32>
    }
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1, 2] : (tensor<2x4x16xf32>) -> tensor<2x4x16x1xf32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2, 3] : (tensor<2x4x16x1xf32>) -> tensor<2x4x16x16xf32>
    %10 = stablehlo.divide %6, %9 : tensor<2x4x16x16xf32> loc(#loc16)
    return %10 : tensor<2x4x16x16xf32>
  }
}
#loc10 = loc("attention.py":21:8)
#loc11 = loc("attention.py":22:8)
#loc12 = loc("attention.py":25:13)
#loc13 = loc("attention.py":26:8)
#loc14 = loc("attention.py":27:10)
#loc15 = loc("jit(attention)/jit(main)/jit(_softmax)/reduce_max"("attention.py":26:8))
#loc16 = loc(callsite(#loc17 at #loc13))
#loc17 = loc("jit(attention)/jit(main)/jit(_softmax)/div"("softmax.py":540:9))
