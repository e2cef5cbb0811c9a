-- Nothing happens until require("conductor").setup{} is called.
if vim.g.loaded_conductor then
  return
end
vim.g.loaded_conductor = true
