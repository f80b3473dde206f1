/* a lab header: roofline-lab's alone */
int z_measure(int n);
