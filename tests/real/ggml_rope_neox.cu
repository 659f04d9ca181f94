// Modelled on ggml-org/llama.cpp ggml/src/ggml-cuda/rope.cu, rope_neox<forward, has_ff, T> with
// rope_yarn, commit 5f08773a4d46957a9c180a7d50b2f05cfcdd6dcf, MIT licence. Written for LARK's
// corpus from that kernel's structure (a (1, 256) block walks pairs of dimensions, blockIdx.x picks
// the row, the token position is read from `pos` by channel, YaRN ramp between interpolated and
// extrapolated angles, dimensions past n_dims copied through with an early return, the rotated
// pair written n_dims/2 apart; the correction dimensions arrive as a by-value struct); not a copy
// of its text. Instantiated for <true, false, float>.
// Host launch in llama.cpp: block (1, 256), grid (nrows, ceil(ne0 / 512)).
#include "ggml_common.h"

struct rope_corr_dims {
  float v[2];
};

static __device__ __forceinline__ float rope_yarn_ramp(const float low, const float high, const int i0) {
  const float y = (i0 / 2 - low) / fmaxf(0.001f, high - low);
  return 1.0f - fminf(1.0f, fmaxf(0.0f, y));
}

template <bool forward>
static __device__ __forceinline__ void rope_yarn(const float theta_extrap, const float freq_scale, const rope_corr_dims corr_dims,
                                                 const int i0, const float ext_factor, float mscale, float& cos_theta,
                                                 float& sin_theta) {
  float theta_interp = freq_scale * theta_extrap;
  float theta = theta_interp;
  if (ext_factor != 0.0f) {
    float ramp_mix = rope_yarn_ramp(corr_dims.v[0], corr_dims.v[1], i0) * ext_factor;
    theta = theta_interp * (1 - ramp_mix) + theta_extrap * ramp_mix;
    mscale *= 1.0f + 0.1f * logf(1.0f / freq_scale);
  }
  cos_theta = cosf(theta) * mscale;
  sin_theta = sinf(theta) * mscale;
  if (!forward) sin_theta *= -1.0f;
}

template <bool forward, bool has_ff, typename T>
static __global__ void rope_neox(const T* x, T* dst, const int ne0, const int ne1, const int s1, const int s2, const int n_dims,
                                 const int32_t* pos, const float freq_scale, const float ext_factor, const float attn_factor,
                                 const rope_corr_dims corr_dims, const float theta_scale, const float* freq_factors) {
  const int i0 = 2 * (blockDim.y * blockIdx.y + threadIdx.y);
  if (i0 >= ne0) return;
  const int row_dst = blockDim.x * blockIdx.x + threadIdx.x;
  const int row_x = row_dst % ne1;
  const int channel_x = row_dst / ne1;
  const int idst = row_dst * ne0 + i0 / 2;
  const int ix = channel_x * s2 + row_x * s1 + i0 / 2;

  if (i0 >= n_dims) {  // pass-through dimensions: contiguous row_dst * ne0 indexing for x and dst
    const int i = row_dst * ne0 + i0;
    dst[i + 0] = x[i + 0];
    dst[i + 1] = x[i + 1];
    return;
  }
  const float theta_base = pos[channel_x] * powf(theta_scale, i0 / 2.0f);
  const float freq_factor = has_ff ? freq_factors[i0 / 2] : 1.0f;
  float cos_theta, sin_theta;
  rope_yarn<forward>(theta_base / freq_factor, freq_scale, corr_dims, i0, ext_factor, attn_factor, cos_theta, sin_theta);
  const float x0 = x[ix + 0];
  const float x1 = x[ix + n_dims / 2];
  dst[idst + 0] = x0 * cos_theta - x1 * sin_theta;
  dst[idst + n_dims / 2] = x0 * sin_theta + x1 * cos_theta;
}

template __global__ void rope_neox<true, false, float>(const float*, float*, const int, const int, const int, const int, const int,
                                                       const int32_t*, const float, const float, const float, const rope_corr_dims,
                                                       const float, const float*);
