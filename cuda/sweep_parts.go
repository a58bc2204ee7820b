package cuda

// SweepParts are the parts of Sweep, in the order they run:
//
//   - givens-chunks: givens_scan (f32, k = 8, forward and
//     forward+backward) at the lab and long-T shapes and shapes between
//     them under every chunk count the chunked kernels take;
//   - givens-chunks-large: the givens_scan forward at the large shape in
//     every element type under 1 to 8 chunks;
//   - matrix-scan: matrix_scan (f32 and f16, forward and
//     forward+backward) at the lab and long-T shapes under every tile (1
//     to 32 blocks) and chunk count the kernels take, and the forward at
//     the large shape in every element type under tiles of 8 to 32;
//   - elementwise-chunks: the forwards of linear_scan and
//     parallel_scan_log at the large shape in every element type under 1
//     to 32 chunks, three rounds (so that the spread of one row shows
//     beside the differences);
//   - givens-tile: givens_scan (forward and forward+backward, every
//     element type) at the large shape under tiles of 4, 8 and 16 lanes a
//     block, two rounds.
var SweepParts = []string{"givens-chunks", "givens-chunks-large", "matrix-scan", "elementwise-chunks", "givens-tile"}
