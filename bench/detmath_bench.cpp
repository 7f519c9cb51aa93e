// (being written)
int main() {}
