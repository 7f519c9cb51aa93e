// placeholder: being written this session
