#version 450
// An empty kernel: timing one dispatch of it measures the fixed cost of a
// launch.
layout(local_size_x_id = 0) in;
void main() {
}
